// The catalog is the topology (DESIGN.md "The topology is data"): who publishes each message, who
// consumes it, and who serves each RPC method. These checks keep it whole.
import { consumedTypesByService, consumedTypesOf, MESSAGE_TYPES, messageCatalog, publishedTypesOf, type MessageCatalogEntry } from './messages';
import { SERVICE_NAMES } from './openapi/types';
import { RPC_METHODS, rpcCatalog } from './rpc';

const entries = MESSAGE_TYPES.map((type) => [type, messageCatalog[type] as MessageCatalogEntry] as const);

describe('topology', () => {
  it('every consumed type has a publisher', () => {
    const orphans = entries.filter(([, e]) => e.consumedBy.length > 0 && e.publishedBy.length === 0).map(([type]) => type);
    expect(orphans).toEqual([]);
  });

  it('every published type has a consumer, unless it is marked as kept for later', () => {
    const unheard = entries.filter(([, e]) => e.publishedBy.length > 0 && e.consumedBy.length === 0 && !e.keptForLater).map(([type]) => type);
    expect(unheard).toEqual([]);
  });

  it('marks only types that really have no consumer as kept for later', () => {
    const stale = entries.filter(([, e]) => e.keptForLater !== undefined && e.consumedBy.length > 0).map(([type]) => type);
    expect(stale).toEqual([]);
    expect(entries.filter(([, e]) => e.keptForLater !== undefined).map(([type]) => type).sort()).toEqual(['gateway.key_created', 'gateway.key_revoked', 'gateway.workspace_created']);
  });

  it('names services only, each at most once per list', () => {
    for (const [type, e] of entries) {
      for (const list of [e.publishedBy, e.consumedBy]) {
        expect({ type, unknown: list.filter((s) => !(SERVICE_NAMES as readonly string[]).includes(s)) }).toEqual({ type, unknown: [] });
        expect(new Set(list).size).toBe(list.length);
      }
    }
  });

  it('gives each consuming service one queue with exactly its types', () => {
    const byService = consumedTypesByService();
    for (const [service, types] of byService) {
      expect(types).toEqual(consumedTypesOf(service));
      for (const type of types) expect(messageCatalog[type].consumedBy as readonly string[]).toContain(service);
    }
    // A service publishes nothing it also consumes, except ingest, whose intake hands batches to its own pipeline.
    const selfLoops = SERVICE_NAMES.flatMap((s) => publishedTypesOf(s).filter((t) => consumedTypesOf(s).includes(t)).map((t) => `${s}:${t}`));
    expect(selfLoops).toEqual(['ingest:ingest.batch_received']);
  });

  it('has a publisher for what each service consumes among the services being built', () => {
    // The funnels and automations services consume facts every other service already publishes.
    expect(consumedTypesOf('funnels').sort()).toEqual(['events.classified', 'identity.merged', 'milestone.reached']);
    expect(consumedTypesOf('changefeed')).toContain('funnel.created');
    expect(publishedTypesOf('attribution')).toEqual(['conversion.attributed']);
  });

  it('serves every RPC method by the service its name starts with', () => {
    for (const method of RPC_METHODS) {
      const entry = rpcCatalog[method];
      expect(entry).toBeDefined();
      expect(method.startsWith(`${entry?.service}.`)).toBe(true);
      expect(entry?.request.$id).toMatch(/^https:\/\/sightline\.dev\/schemas\/rpc\//);
      expect(entry?.response.$id).toMatch(/^https:\/\/sightline\.dev\/schemas\/rpc\//);
    }
  });
});
