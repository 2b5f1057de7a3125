// @sightline/proto-schemas: message and RPC catalogs, their validator, the metric/dimension
// registry and the public OpenAPI document built from it.
export * from './messages';
export * from './message-types';
export { MESSAGE_EXAMPLES } from './message-examples';
export * from './rpc';
export * from './validator';
export * from './registry';
export * from './openapi/index';
