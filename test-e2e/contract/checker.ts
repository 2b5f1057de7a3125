// Holds an answer of the public API to the OpenAPI document the server serves: the status is
// declared for the operation, the content type is the declared one, the body validates against the
// declared schema (ajv), the declared headers are present and well-formed, and a problem's kind is
// one listed for its status, its `status` the HTTP status and its `instance` the request id.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

interface ResponseObject {
  headers?: Record<string, Json>;
  content?: Record<string, { schema: Json }>;
  'x-sightline-problem-kinds'?: string[];
}

export interface DocumentOperation {
  operationId: string;
  parameters?: Json[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Json }> };
  responses: Record<string, ResponseObject>;
  [extension: string]: unknown;
}

export interface ServedDocument {
  paths: Record<string, Record<string, DocumentOperation>>;
  components: { schemas: Record<string, Json>; headers?: Record<string, Json> };
}

export interface Answer {
  method: string;
  /** Full URL or path; only the path is matched. */
  url: string;
  status: number;
  headers: Headers;
  /** The body as received (text). */
  text: string;
}

export interface MatchedOperation {
  method: string;
  /** The document's path, e.g. `/v1/contacts/{id}`. */
  path: string;
  operation: DocumentOperation;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const DOCUMENT_ID = 'https://sightline.test/served-openapi';

export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { regex: RegExp; literal: boolean; path: string; item: Record<string, DocumentOperation> }[];

  constructor(readonly document: ServedDocument) {
    // strict off: the document's vendor extensions (x-sightline-*) are annotations.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
    this.routes = Object.entries(document.paths).map(([path, item]) => {
      // The document lists /v1 paths; the same path without /v1 is the same operation.
      const pattern = path.replace(/^\/v1(?=\/)/, '(?:/v1)?').replace(/\{[^}]+\}/g, '[^/]+');
      return { regex: new RegExp(`^${pattern}$`), literal: !path.includes('{'), path, item };
    });
    // A literal path wins over a templated one that also matches.
    this.routes.sort((a, b) => Number(b.literal) - Number(a.literal));
  }

  /** Every operation of the document, in document order. */
  operations(): MatchedOperation[] {
    const out: MatchedOperation[] = [];
    for (const [path, item] of Object.entries(this.document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation) out.push({ method, path, operation });
      }
    }
    return out;
  }

  /** The operation a request reaches, `null` for a path the document does not have, `'method'` for a path without that method. */
  match(method: string, url: string): MatchedOperation | null | 'method' {
    const path = pathOf(url);
    const route = this.routes.find((r) => r.regex.test(path));
    if (!route) return null;
    const operation = route.item[method.toLowerCase()];
    return operation ? { method: method.toLowerCase(), path: route.path, operation } : 'method';
  }

  /** What is wrong with this answer, as sentences; empty when it keeps the contract. */
  check(answer: Answer): string[] {
    const matched = this.match(answer.method, answer.url);
    const where = `${answer.method.toUpperCase()} ${pathOf(answer.url)} → ${answer.status}`;
    if (matched === null || matched === 'method') {
      // Refused before any operation (unknown path, wrong method): still a problem document.
      if (answer.status < 400) return matched === 'method' ? [`${where}: a method the path does not have was answered ${answer.status}`] : [];
      return this.checkProblem(answer, null).map((m) => `${where}: ${m}`);
    }
    const response = matched.operation.responses[String(answer.status)] ?? matched.operation.responses['default'];
    if (!response) {
      return [`${where}: status ${answer.status} is not declared for ${matched.operation.operationId} (declared: ${Object.keys(matched.operation.responses).join(', ')})`];
    }
    return this.checkResponse(answer, response, `${matched.operation.operationId}.${answer.status}`).map((m) => `${where}: ${m}`);
  }

  private checkResponse(answer: Answer, response: ResponseObject, key: string): string[] {
    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = answer.headers.get(name);
      if (value === null) {
        problems.push(`declared header ${name} is missing`);
        continue;
      }
      const schema = (this.resolve(header) as { schema?: Json }).schema;
      if (schema?.['type'] === 'integer' && !/^\d+$/.test(value)) problems.push(`header ${name} is not an integer: ${JSON.stringify(value)}`);
    }
    const declared = Object.keys(response.content ?? {});
    const contentType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (declared.length === 0) {
      if (answer.text !== '') problems.push(`a body was sent where none is declared (${contentType})`);
      return problems;
    }
    if (!declared.includes(contentType)) {
      problems.push(`content type ${JSON.stringify(contentType)} is not declared (declared: ${declared.join(', ')})`);
      return problems;
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      problems.push('the body is not JSON');
      return problems;
    }
    const validate = this.validator(`${key} ${contentType}`, response.content?.[contentType]?.schema ?? {});
    if (!validate(body)) {
      for (const error of (validate.errors ?? []).slice(0, 5)) {
        problems.push(`body${error.instancePath || ''} ${error.message ?? 'is invalid'}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`);
      }
    }
    if (contentType === 'application/problem+json') problems.push(...this.checkProblem(answer, response, body));
    return problems;
  }

  /** A problem document: listed kind (when the response lists kinds), status and instance as sent. */
  private checkProblem(answer: Answer, response: ResponseObject | null, parsed?: unknown): string[] {
    const problems: string[] = [];
    let body = parsed;
    if (body === undefined) {
      const contentType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim();
      if (contentType !== 'application/problem+json') return [`an error was answered as ${JSON.stringify(contentType)}, not application/problem+json`];
      try {
        body = JSON.parse(answer.text);
      } catch {
        return ['the problem document is not JSON'];
      }
      const validate = this.validator('Problem', { $ref: '#/components/schemas/Problem' });
      if (!validate(body)) problems.push(`problem document ${validate.errors?.[0]?.instancePath ?? ''} ${validate.errors?.[0]?.message ?? 'is invalid'}`);
    }
    const problem = (body ?? {}) as { type?: unknown; status?: unknown; instance?: unknown };
    const kind = typeof problem.type === 'string' ? problem.type.slice(problem.type.lastIndexOf('/') + 1) : '';
    const listed = response?.['x-sightline-problem-kinds'];
    if (listed && !listed.includes(kind)) problems.push(`problem kind ${JSON.stringify(kind)} is not listed for this status (listed: ${listed.join(', ')})`);
    if (problem.status !== answer.status) problems.push(`problem status ${String(problem.status)} differs from the HTTP status`);
    const requestId = answer.headers.get('sightline-request-id');
    if (!requestId) problems.push('the Sightline-Request-Id header is missing');
    else if (problem.instance !== requestId) problems.push(`problem instance ${JSON.stringify(problem.instance)} differs from Sightline-Request-Id ${requestId}`);
    return problems;
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as Json);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private resolve(value: Json): Json {
    const ref = value['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
    let node: unknown = this.document;
    for (const part of ref.slice(2).split('/')) node = (node as Json | undefined)?.[part];
    return (node ?? {}) as Json;
  }
}

export function pathOf(url: string): string {
  return url.startsWith('/') ? (url.split('?')[0] ?? url) : new URL(url).pathname;
}

/** Local `#/components/...` refs pointed at the registered document. */
function rebase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebase);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOCUMENT_ID}${v}` : rebase(v)]));
  }
  return value;
}
