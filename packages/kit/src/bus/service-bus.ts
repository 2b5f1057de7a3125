// The bus as one service sees it: it may publish only the types the catalog lists it as a
// publisher of, each with its catalog payload, and call any RPC method with that method's request
// type. The same rule is checked at run time, so a module cannot publish around its declaration.
import {
  isRpcMethod,
  SERVICE_NAMES,
  publishedTypesOf,
  type MessagePayloads,
  type PublishedBy,
  type RpcMethod,
  type RpcRequestOf,
  type RpcResponseOf,
  type ServiceName,
} from '@sightline/proto-schemas';
import { partitionOf } from './partitions';
import { InvalidMessageError, type Bus, type Envelope, type PublishInput, type RpcCallOptions } from './types';

/** A publish input whose payload is the catalog's type for its `type`. */
export type PublishInputOf<T extends keyof MessagePayloads> = T extends keyof MessagePayloads
  ? Omit<PublishInput<MessagePayloads[T]>, 'type'> & { type: T }
  : never;

export interface ServiceBus<S extends ServiceName> {
  readonly driver: Bus['driver'];
  readonly service: S;
  /** Partitions of each partitioned type (catalog `partitionedBy`); 1 when unpartitioned. */
  readonly partitions: number;
  /** The partition a message with this ordering key goes to (PublishInput.partition). */
  partitionOf(key: string): number;
  publish(input: PublishInputOf<PublishedBy<S>>): Promise<Envelope>;
  publishMany(inputs: readonly PublishInputOf<PublishedBy<S>>[]): Promise<Envelope[]>;
  /** Bus.admit: before intake work that ends in a publish, so a full backlog refuses it before the work is spent. */
  admit(): Promise<void>;
  call<M extends RpcMethod>(method: M, request: RpcRequestOf<M>, options?: RpcCallOptions): Promise<RpcResponseOf<M>>;
}

export function serviceBus<S extends ServiceName>(bus: Bus, service: S): ServiceBus<S> {
  // A test stand-in's name may be no service at all: it publishes nothing.
  const allowed = new Set<string>(isServiceName(service) ? publishedTypesOf(service) : []);
  const check = (inputs: readonly PublishInput[]): PublishInput[] => {
    for (const input of inputs) {
      if (!allowed.has(input.type)) {
        throw new InvalidMessageError(`${service} may not publish ${input.type}: the catalog lists publishers ${JSON.stringify([...allowed])} for ${service}; add it to publishedBy in proto-schemas`);
      }
    }
    return [...inputs];
  };
  return {
    driver: bus.driver,
    service,
    partitions: bus.partitions,
    partitionOf: (key) => partitionOf(key, bus.partitions),
    publish: async (input) => (await bus.publishMany(check([input])))[0] as Envelope,
    publishMany: (inputs) => bus.publishMany(check(inputs)),
    admit: () => bus.admit(),
    call: (method, request, options) => {
      if (!isRpcMethod(method)) throw new InvalidMessageError(`unknown RPC method '${method}'`);
      return bus.rpc(method, request, { ...options, caller: service });
    },
  };
}

function isServiceName(name: string): name is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(name);
}
