import { createStoreProvider, createLogger, type KvStore } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type ClassifiedEventV1 } from '@sightline/proto-schemas';
import { Sessionizer } from './sessions';

const base = MESSAGE_EXAMPLES['events.classified'].events[0] as ClassifiedEventV1;
const at = (minutes: number) => new Date(Date.UTC(2026, 2, 4, 10, 0) + minutes * 60_000).toISOString();
let seq = 0;
const hit = (visitor: string, minutes: number, campaign = ''): ClassifiedEventV1 => ({
  ...base,
  event_id: `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`,
  anonymous_id: visitor,
  occurred_at: at(minutes),
  campaign_key: campaign,
  page: `/p${minutes}`,
  session_id: null,
  session: null,
});

describe('sessions', () => {
  let kv: KvStore;
  let sessions: Sessionizer;
  beforeEach(async () => {
    kv = await createStoreProvider({ logger: createLogger({ level: 'silent' }) }).kv();
    sessions = new Sessionizer(kv);
  });

  it('keeps hits within 30 minutes of each other in one session, with the first hit as landing page', async () => {
    const hits = [hit('v1', 0), hit('v1', 10), hit('v1', 39)];
    await sessions.assign('w', hits);
    expect(new Set(hits.map((h) => h.session_id)).size).toBe(1);
    expect(hits[2]?.session?.landing_page).toBe('/p0');
  });

  it('starts a new session after more than 30 minutes of inactivity, across batches', async () => {
    const first = [hit('v2', 0)];
    const second = [hit('v2', 31)];
    await sessions.assign('w', first);
    await sessions.assign('w', second);
    expect(second[0]?.session_id).not.toBe(first[0]?.session_id);
    expect(second[0]?.session?.landing_page).toBe('/p31');
  });

  it('starts a new session when campaign parameters change, but not for hits without any', async () => {
    const hits = [hit('v3', 0, 'google|cpc|spring'), hit('v3', 2), hit('v3', 4, 'newsletter|email|may')];
    await sessions.assign('w', hits);
    expect(hits[1]?.session_id).toBe(hits[0]?.session_id);
    expect(hits[2]?.session_id).not.toBe(hits[0]?.session_id);
  });

  it('gives a replayed batch the same sessions', async () => {
    const hits = [hit('v4', 0), hit('v4', 45)];
    await sessions.assign('w', hits);
    const replay = hits.map((h) => ({ ...h, session_id: null, session: null }));
    await sessions.assign('w', replay);
    expect(replay.map((h) => h.session_id)).toEqual(hits.map((h) => h.session_id));
  });

  it('leaves server-side events without a session', async () => {
    const server = { ...hit('v5', 0), origin: 'api' as const };
    await sessions.assign('w', [server]);
    expect(server.session_id).toBeNull();
  });
});
