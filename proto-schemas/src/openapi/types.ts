// The slice of OpenAPI 3.1 this document uses, with the vendor extensions the gateway routes by.
import type { ScopeName } from '../registry/scopes';

export type Schema = Record<string, unknown>;

export const SERVICE_NAMES = [
  'gateway', 'ingest', 'attribution', 'contacts', 'funnels', 'automations', 'crm-sync', 'changefeed',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

export interface ParameterObject {
  name: string;
  in: 'query' | 'path' | 'header';
  description: string;
  required?: boolean;
  deprecated?: boolean;
  schema: Schema;
  style?: 'form' | 'simple';
  explode?: boolean;
  /** Problem kind for a value outside the parameter's fixed set (or otherwise invalid). */
  'x-sightline-error-kind'?: string;
  /** True on a limit answered with its maximum when exceeded, rather than refused. */
  'x-sightline-clamp'?: boolean;
  /** A scope needed only when this parameter is sent (contacts `email` needs pii:read). */
  'x-sightline-scope'?: ScopeName;
  /** On `filter`: the dimensions and operators its three parts may name. */
  'x-sightline-filter'?: { dimensions: string[]; operators: string[] };
}

export interface MediaTypeObject { schema: Schema }

export interface ResponseObject {
  description: string;
  headers?: Record<string, Schema>;
  content?: Record<string, MediaTypeObject>;
  /** Problem kinds this status can carry. */
  'x-sightline-problem-kinds'?: string[];
}

export interface RequestBodyObject {
  description?: string;
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  deprecated?: boolean;
  parameters: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
  security: Record<string, string[]>[];
  'x-sightline-service': ServiceName;
  'x-sightline-scope': ScopeName | null;
  'x-sightline-website': boolean;
  'x-sightline-analytics': boolean;
  /** Bus RPC method the gateway calls (`<service>.<operationId>`), or null when it answers itself. */
  'x-sightline-rpc': string | null;
  /** On a Legacy alias: the operation it behaves exactly as. */
  'x-sightline-canonical-operation'?: string;
}

export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>;

export interface OpenApiDocument {
  openapi: string;
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    securitySchemes: Record<string, Schema>;
    schemas: Record<string, Schema>;
    headers: Record<string, Schema>;
  };
}
