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
  /** When the message was published, epoch milliseconds: consumers measure how long it waited. */
  publishedAt: 'x-sightline-published-at',
} as const;

export interface BusNames {
  exchange: string;
  serviceQueue(service: string): string;
  retryQueue(service: string): string;
  deadLetterQueue(service: string): string;
  rpcQueue(service: string): string;
  /** Partition `n` of a service's partitioned types (single active consumer), and its retry queue. */
  partitionQueue(service: string, n: number): string;
  partitionRetryQueue(service: string, n: number): string;
  /** Routing key of a partitioned type's message in partition `n`: the type with the partition appended. */
  partitionKey(type: string, n: number): string;
  /** Where the consumers of a service's partitions announce themselves (routing key = service). */
  membersExchange: string;
}

export function busNames(namespace: string): BusNames {
  return {
    exchange: `${namespace}.events`,
    serviceQueue: (service) => `${namespace}.${service}`,
    retryQueue: (service) => `${namespace}.${service}.retry`,
    deadLetterQueue: (service) => `${namespace}.${service}.dlq`,
    rpcQueue: (service) => `${namespace}.rpc.${service}`,
    partitionQueue: (service, n) => `${namespace}.${service}.p${n}`,
    partitionRetryQueue: (service, n) => `${namespace}.${service}.p${n}.retry`,
    partitionKey: (type, n) => `${type}.p${n}`,
    membersExchange: `${namespace}.members`,
  };
}

/** `contacts.get` is served by `contacts`. */
export function rpcServiceOf(method: string): string {
  const dot = method.indexOf('.');
  if (dot <= 0) throw new Error(`RPC method "${method}" must be <service>.<verb>`);
  return method.slice(0, dot);
}
