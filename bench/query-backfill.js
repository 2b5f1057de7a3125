// A bulk backfill for the query benchmark: classified events of sessions that happened earlier in
// the workspace's history (existing visitors, random times), delivered to attribution's
// events.classified consumer the way the bus delivers ingest's batches (500 events per message, 32
// messages in flight). The consumer stores them and maintains the read model (the sessions'
// traffic rows, and the journeys of every conversion the sessions reach) before each message
// settles, so the time until the last message settles is the time the read model takes to catch up.
const { randomUUID } = require('node:crypto');
const { Rng } = require('@sightline/datagen');
const profile = require('./query-profile');

const EVENTS_PER_MESSAGE = 500;
const IN_FLIGHT = 32;
const HITS_PER_SESSION = 5;
const MINUTE = 60_000;

function pick(rand, weighted) {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  let x = rand() * total;
  for (const [value, w] of weighted) if ((x -= w) < 0) return value;
  return weighted[weighted.length - 1][0];
}

/** The sessions' hits, one message's worth at a time. */
function* messages({ website, identities, start, end, events, seed }) {
  // datagen's seeded generator, so a size always gives the same backfill.
  const rng = new Rng(seed);
  const rand = () => rng.float();
  const channels = profile.CHANNELS.map((c) => [c, c.later]);
  let batch = [];
  for (let made = 0; made < events; made += HITS_PER_SESSION) {
    const identity = identities[Math.floor(rand() * identities.length)];
    const startedMs = start + Math.floor(rand() * (end - start - HITS_PER_SESSION * MINUTE));
    const channel = pick(rand, channels);
    const [source] = pick(rand, channel.sources.map((s) => [s, s[1]]));
    const campaign = channel.campaigns ? channel.campaigns[Math.floor(rand() * channel.campaigns.length)] : null;
    const sessionId = randomUUID();
    const landing = profile.PAGES[Math.floor(rand() * profile.PAGES.length)];
    const session = {
      started_at: new Date(startedMs).toISOString(), landing_page: landing, channel: channel.name, source, medium: channel.medium,
      campaign, term: null, content: null, referrer_domain: null, click_ids: {},
    };
    for (let k = 0; k < HITS_PER_SESSION; k += 1) {
      const at = new Date(startedMs + k * 2 * MINUTE).toISOString();
      const page = k === 0 ? landing : profile.PAGES[Math.floor(rand() * profile.PAGES.length)];
      batch.push({
        event_id: randomUUID(), origin: 'tracker', event_type: 'pageview', event_name: null, occurred_at: at, received_at: at,
        anonymous_id: identity, email: null, email_hash: null, phone: null, revenue: null, currency: null, properties: {},
        url: `https://www.bench.test${page}`, referrer: null, title: 'Bench', screen: '1440x900', hostname: 'www.bench.test', page,
        referrer_domain: null, source, medium: channel.medium, campaign, term: null, content: null, channel: channel.name,
        channel_rule: 'bench', campaign_key: `${source}|${channel.medium}|${campaign ?? ''}|||`, click_ids: {},
        browser: 'Chrome', operating_system: 'Windows', device_type: 'desktop', country: 'DE', region: null, city: null,
        identity_id: identity, session_id: sessionId, session,
      });
      if (batch.length === EVENTS_PER_MESSAGE) {
        yield { batch_id: randomUUID(), website, events: batch };
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield { batch_id: randomUUID(), website, events: batch };
}

/**
 * Delivers `events` backfilled events over [start, end - 1 day) to `consume` (attribution's
 * events.classified handler); returns the seconds until every message settled and how many
 * outcome rows the read model (re)computed meanwhile.
 */
async function backfill(ch, consume, { website, events, start, end, log, seed = 20260101 }) {
  const identities = (await ch.query(
    `SELECT DISTINCT identity_id FROM touches WHERE website_id = {website:UUID} AND cityHash64(identity_id) % 3 = 0 LIMIT 200000`,
    { website: website.id },
  )).map((r) => r.identity_id);
  const t0 = Date.now();
  const inFlight = new Set();
  let sent = 0;
  let lastLog = t0;
  for (const payload of messages({ website, identities, start: start.getTime(), end: end.getTime() - 86_400_000, events, seed })) {
    const envelope = { id: randomUUID(), type: 'events.classified', version: 1, occurred_at: new Date().toISOString(), workspace_id: website.workspace_id, website_id: website.id, source: 'ingest', payload };
    const p = consume(envelope).finally(() => inFlight.delete(p));
    inFlight.add(p);
    sent += payload.events.length;
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(`backfill: ${sent} events delivered, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  }
  await Promise.all(inFlight);
  const seconds = (Date.now() - t0) / 1000;
  // Outcomes whose newest row was computed during the backfill (each counted once, however often it was recomputed).
  const [recomputed] = await ch.query(
    'SELECT count() AS n FROM outcome_journeys FINAL WHERE website_id = {website:UUID} AND computed_at >= {since:DateTime64(3, \'UTC\')}',
    { website: website.id, since: new Date(t0) },
  );
  return { events: sent, identities: identities.length, seconds, recomputedOutcomes: Number(recomputed.n) };
}

module.exports = { backfill };
