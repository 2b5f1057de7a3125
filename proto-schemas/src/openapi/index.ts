// The public OpenAPI document and a flat view of its operations for generic routing.
import { openApiDocument } from './document';
import type { HttpMethod, OperationObject } from './types';

export { API_PREFIX, LEGACY_PATH_ALIASES, openApiDocument } from './document';
export { DOCUMENT_PROBLEM_KINDS, DOCUMENT_PROBLEM_KINDS as PROBLEM_KINDS, PROBLEM_TYPE_BASE, type DocumentProblemKind } from './problems';
export { CONTACT_WRITABLE_FIELDS } from './schemas-contacts';
export { FUNNEL_MATCHER, FUNNEL_WINDOW_DAYS, MAX_CUSTOM_EVENT_TYPES, MAX_FUNNELS_PER_WEBSITE } from './schemas-funnels';
export * from './types';

export interface OperationEntry {
  method: HttpMethod;
  /** Path as in the document, with the /v1 prefix and `{id}` placeholders. */
  path: string;
  operation: OperationObject;
}

const HTTP_METHODS: readonly HttpMethod[] = ['get', 'post', 'patch', 'delete'];

/** Every operation of the document, legacy aliases included, in document order. */
export function listOperations(): OperationEntry[] {
  const out: OperationEntry[] = [];
  for (const [path, item] of Object.entries(openApiDocument.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) out.push({ method, path, operation });
    }
  }
  return out;
}
