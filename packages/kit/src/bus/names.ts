// Queue and exchange names, shared by both drivers so the topology reads the same everywhere.

export const DEFAULT_NAMESPACE = 'sightline';

/** Header names the bus sets on messages it moves around. */
export const HEADER = {
  /** Failed processing attempts so far. */
  failures: 'x-sightline-failures',
  /** Why a message was dead-lettered. */
  reason: 'x-sightline-reason',
  /** RPC method name. */
  method: 'x-sightline-method',
  /** RPC deadline, epoch milliseconds: a server skips requests past it. */
  deadline: 'x-sightline-deadline',
} as const;

export interface BusNames {
  exchange: string;
  serviceQueue(service: string): string;
  retryQueue(service: string): string;
  deadLetterQueue(service: string): string;
  rpcQueue(service: string): string;
}

export function busNames(namespace: string): BusNames {
  return {
    exchange: `${namespace}.events`,
    serviceQueue: (service) => `${namespace}.${service}`,
    retryQueue: (service) => `${namespace}.${service}.retry`,
    deadLetterQueue: (service) => `${namespace}.${service}.dlq`,
    rpcQueue: (service) => `${namespace}.rpc.${service}`,
  };
}

/** `contacts.get` is served by `contacts`. */
export function rpcServiceOf(method: string): string {
  const dot = method.indexOf('.');
  if (dot <= 0) throw new Error(`RPC method "${method}" must be <service>.<verb>`);
  return method.slice(0, dot);
}
