// Generates the query benchmark's workspace straight into attribution's ClickHouse tables with
// INSERT ... SELECT over numbers(): people, their sessions (touches), the events of each session,
// conversions after a session, identity merges and a few written-back outcome values. Going
// through ingest would take half an hour at 10M events; SQL takes a few minutes on 2 cores. The
// tables are the service's own fact tables (its migrations ran first, so its materialized views
// index the facts as they go); the benchmark then builds the read model from them with the
// operator rebuild.
//
// Every random draw is a hash of the row's keys and a fixed salt, so a size always gives the same
// data. Sizes and the profile's arrays are bound as parameters; salts are constants of this file.
const profile = require('./query-profile');

const DAY_S = 86_400;
/** Scratch database for the intermediate people and sessions tables, dropped afterwards. */
const GEN = 'bench_query_gen';

/** Uniform draw in [0, 1) from the given key expressions and a salt. */
const u = (...keys) => `(cityHash64(${keys.join(', ')}) / 18446744073709551616.0)`;
/** A UUID-formatted string derived from the key expressions and a salt. */
const uuid = (...keys) =>
  `UUIDNumToString(toFixedString(concat(reinterpretAsFixedString(cityHash64(${keys.join(', ')}, 1)), reinterpretAsFixedString(cityHash64(${keys.join(', ')}, 2))), 16))`;
/** Index (1-based) of a weighted choice: `cum` names a bound Array(Float64) of cumulative weights. */
const choose = (cum, draw) => `arrayFirstIndex(x -> x >= ${draw}, ${cum})`;

/** Cumulative weights ending exactly at 1, so every draw in [0, 1) finds an index. */
function cumulative(weights) {
  const total = weights.reduce((a, b) => a + b, 0);
  let run = 0;
  return weights.map((w, i) => (i === weights.length - 1 ? 1 : (run += w) / total));
}

function profileParams() {
  const { CHANNELS: C } = profile;
  const list = (pairs) => pairs.map((p) => p[0]);
  const cum = (pairs) => cumulative(pairs.map((p) => p[1]));
  return {
    channels: C.map((c) => c.name),
    first_cum: cumulative(C.map((c) => c.first)),
    later_cum: cumulative(C.map((c) => c.later)),
    mediums: C.map((c) => c.medium),
    src_names: C.map((c) => list(c.sources)),
    src_cum: C.map((c) => cum(c.sources)),
    src_ref: C.map((c) => c.sources.map((s) => s[2] ?? '')),
    src_platform: C.map((c) => c.sources.map((s) => s[3] ?? '')),
    src_click: C.map((c) => c.sources.map((s) => s[4] ?? '')),
    paid: C.map((c) => (c.paid ? 1 : 0)),
    camps: C.map((c) => c.campaigns ?? []),
    pages: profile.PAGES,
    page_cum: cumulative(profile.LANDING_WEIGHTS),
    keywords: profile.KEYWORDS,
    event_names: profile.EVENT_NAMES,
    countries: list(profile.COUNTRIES), country_cum: cum(profile.COUNTRIES),
    devices: list(profile.DEVICES), device_cum: cum(profile.DEVICES),
    browsers: list(profile.BROWSERS), browser_cum: cum(profile.BROWSERS),
    systems: list(profile.SYSTEMS), system_cum: cum(profile.SYSTEMS),
    conv_names: list(profile.CONVERSION_NAMES), conv_name_cum: cum(profile.CONVERSION_NAMES),
  };
}

/**
 * Sizes derived from the event count: ~30 events per person, ~5 per session, one conversion per
 * ~100 events (about a third of people convert at least once, heavy visitors more than once).
 */
function plan(events, days) {
  return {
    events,
    days,
    people: Math.max(100, Math.round(events * 0.03)),
    /** 95% of conversions follow one of the person's sessions; the rest have no visitor (API, import). */
    trackedConversions: Math.round(events / 100 * 0.95),
    untrackedConversions: Math.round(events / 100 * 0.05),
    mergedShare: 0.04,
  };
}

/**
 * Fills attribution's tables for one website. `ch` is the attribution store (its migrations
 * applied); `log` prints progress. Returns row counts and the seconds each step took.
 */
async function generateWorkspace(ch, { websiteId, workspaceId, events, days = 90, end, log }) {
  const p = plan(events, days);
  const start = new Date(end.getTime() - days * DAY_S * 1000);
  const params = { ...profileParams(), website: websiteId, workspace: workspaceId, start, end, days, people: p.people, merged_share: p.mergedShare };
  const timings = {};
  const step = async (name, fn) => {
    const t0 = Date.now();
    await fn();
    timings[name] = (Date.now() - t0) / 1000;
    log(`${name}: ${timings[name].toFixed(1)} s`);
  };

  await ch.command(`DROP DATABASE IF EXISTS ${GEN}`);
  await ch.command(`CREATE DATABASE ${GEN}`);

  await step('people and sessions', async () => {
    // A person: one identity id (a few have a second device, merged into the first), stable device
    // and geo, a number of sessions (55% visit once, the rest 1 + geometric with mean ~13) spread
    // over an exponential span (mean 20 days) that lies anywhere inside the window.
    await ch.command(
      `CREATE TABLE ${GEN}.people ENGINE = MergeTree ORDER BY p AS
       SELECT p, ${uuid('p', 101)} AS main_id,
              if(${u('p', 102)} < {merged_share:Float64}, ${uuid('p', 103)}, '') AS alt_identity_id,
              if(${u('p', 104)} < 0.55, 1, 1 + least(400, toUInt32(-log(1 - ${u('p', 105)}) * 13.1))) AS n_sessions,
              {start:DateTime64(3, 'UTC')} + toIntervalSecond(toUInt32(${u('p', 100)} * ({days:UInt32} * ${DAY_S} - span))) AS first_seen,
              span,
              ${choose('{first_cum:Array(Float64)}', u('p', 107))} AS c0,
              {devices:Array(String)}[${choose('{device_cum:Array(Float64)}', u('p', 108))}] AS device_type,
              {browsers:Array(String)}[${choose('{browser_cum:Array(Float64)}', u('p', 109))}] AS browser,
              {systems:Array(String)}[${choose('{system_cum:Array(Float64)}', u('p', 110))}] AS operating_system,
              {countries:Array(String)}[${choose('{country_cum:Array(Float64)}', u('p', 111))}] AS country
         FROM (SELECT number AS p, least({days:UInt32} * ${DAY_S} - 3600, toUInt32(-log(1 - ${u('number', 106)}) * 20 * ${DAY_S})) AS span
                 FROM numbers({people:UInt64}))`,
      params,
    );
    // Sessions: the first takes the person's first-visit channel; later ones return through it
    // 30% of the time and otherwise follow the returning-visitor mix (more Direct and Email).
    await ch.command(
      `CREATE TABLE ${GEN}.sessions ENGINE = MergeTree ORDER BY (p, j) AS
       SELECT p, j, session_id, identity_id, started_at, c, si,
              {channels:Array(String)}[c] AS channel,
              {src_names:Array(Array(String))}[c][si] AS source,
              {mediums:Array(String)}[c] AS medium,
              if(length(camps) = 0, '', camps[1 + toUInt32(pow(${u('p', 'j', 120)}, 2.2) * length(camps))]) AS campaign,
              if(channel = 'Paid Search', {keywords:Array(String)}[1 + toUInt32(pow(${u('p', 'j', 121)}, 2) * length({keywords:Array(String)}))], '') AS term,
              if(channel = 'Paid Social', concat('ad_', toString(1 + toUInt32(pow(${u('p', 'j', 122)}, 2) * 12))), '') AS content,
              {src_ref:Array(Array(String))}[c][si] AS referrer_domain,
              {pages:Array(String)}[${choose('{page_cum:Array(Float64)}', u('p', 'j', 123))}] AS landing_page,
              device_type, browser, operating_system, country,
              {paid:Array(UInt8)}[c] AS is_paid,
              {src_platform:Array(Array(String))}[c][si] AS ad_platform,
              if({src_click:Array(Array(String))}[c][si] = '', map(), map({src_click:Array(Array(String))}[c][si], lower(hex(cityHash64(p, j, 124))))) AS click_ids
         FROM (
           SELECT p, j, ${uuid('p', 'j', 130)} AS session_id,
                  if(alt_identity_id != '' AND ${u('p', 'j', 131)} < 0.5, alt_identity_id, main_id) AS identity_id,
                  if(j = 0, first_seen, first_seen + toIntervalSecond(toUInt32(${u('p', 'j', 132)} * span))) AS started_at,
                  if(j = 0 OR ${u('p', 'j', 133)} < 0.3, c0, ${choose('{later_cum:Array(Float64)}', u('p', 'j', 134))}) AS c,
                  ${choose('{src_cum:Array(Array(Float64))}[c]', u('p', 'j', 135))} AS si,
                  {camps:Array(Array(String))}[c] AS camps,
                  device_type, browser, operating_system, country
             FROM ${GEN}.people ARRAY JOIN range(n_sessions) AS j)`,
      params,
    );
  });

  const sessions = Number((await ch.query(`SELECT count() AS n FROM ${GEN}.sessions`))[0].n);
  await step('touches', () =>
    ch.command(
      `INSERT INTO touches (website_id, workspace_id, session_id, identity_id, started_at, channel, source, medium, campaign, term, content,
                            referrer_domain, landing_page, device_type, browser, operating_system, country, region, city, is_paid, ad_platform, click_ids)
       SELECT {website:UUID}, {workspace:UUID}, session_id, identity_id, started_at, channel, source, medium, campaign, term, content,
              referrer_domain, landing_page, device_type, browser, operating_system, country, '', '', is_paid, ad_platform, click_ids
         FROM ${GEN}.sessions`,
      params,
    ),
  );

  await step('conversions', async () => {
    // Tracked conversions: people with more sessions convert more (propensity 0.1 + 0.08 per
    // session, scaled to the planned total), each right after one of their sessions. Purchases
    // carry a log-normal revenue; signups and demo requests none.
    await ch.command(
      `CREATE TABLE ${GEN}.conversions ENGINE = MergeTree ORDER BY conversion_id AS
       SELECT toUUID(${uuid('cv.p', 'cv.m', 140)}) AS conversion_id, s.identity_id AS identity_id,
              if(${u('cv.p', 'cv.m', 141)} < 0.7, concat('person', toString(cv.p), '@example.com'), '') AS email,
              least(s.started_at + toIntervalSecond(60 + toUInt32(${u('cv.p', 'cv.m', 142)} * 1500)), {end:DateTime64(3, 'UTC')} - toIntervalSecond(1)) AS occurred_at,
              if(purchase, 'purchase', 'conversion') AS event_type,
              if(purchase, 'purchase', {conv_names:Array(String)}[${choose('{conv_name_cum:Array(Float64)}', u('cv.p', 'cv.m', 143))}]) AS event_name,
              if(purchase, round(exp(3.6 + 0.9 * sqrt(-2 * log(1 - ${u('cv.p', 'cv.m', 144)})) * cos(2 * pi() * ${u('cv.p', 'cv.m', 145)})), 2), NULL) AS revenue,
              s.session_id AS session_id, s.started_at AS session_started_at, s.landing_page AS landing_page, s.channel AS channel, s.source AS source,
              s.medium AS medium, s.campaign AS campaign, s.term AS term, s.content AS content, s.referrer_domain AS referrer_domain,
              s.click_ids AS click_ids, s.device_type AS device_type, s.country AS country, s.browser AS browser,
              s.operating_system AS operating_system, s.is_paid AS is_paid, s.ad_platform AS ad_platform
         FROM (
           SELECT p, m, toUInt32(${u('p', 'm', 146)} * n_sessions) AS j, ${u('p', 'm', 147)} < 0.45 AS purchase
             FROM (SELECT p, n_sessions, toUInt32(prop * scale + ${u('p', 148)}) AS k
                     FROM (SELECT p, n_sessions, 0.1 + 0.08 * n_sessions AS prop FROM ${GEN}.people) AS pp
                     CROSS JOIN (SELECT {tracked:Float64} / sum(0.1 + 0.08 * n_sessions) AS scale FROM ${GEN}.people) AS t)
             ARRAY JOIN range(k) AS m
         ) AS cv
         INNER JOIN ${GEN}.sessions AS s ON s.p = cv.p AND s.j = cv.j`,
      { ...params, tracked: p.trackedConversions },
    );
    await ch.command(
      `INSERT INTO conversions (conversion_id, workspace_id, website_id, identity_id, anonymous_id, email, occurred_at, event_type, event_name, revenue, currency, origin)
       SELECT conversion_id, {workspace:UUID}, {website:UUID}, identity_id, identity_id, email, occurred_at, event_type, event_name, revenue, 'EUR', 'tracker'
         FROM ${GEN}.conversions`,
      params,
    );
    // Conversions without browsing history: sent through the API with no visitor (3/5), and
    // imported CRM contacts whose relationship began before tracking (2/5).
    await ch.command(
      `INSERT INTO conversions (conversion_id, workspace_id, website_id, identity_id, anonymous_id, email, occurred_at, event_type, event_name, revenue, currency, origin, relationship_started_at)
       SELECT toUUID(${uuid('number', 150)}), {workspace:UUID}, {website:UUID}, '', '', concat('lead', toString(number), '@example.com'), at,
              if(imported, 'purchase', 'conversion'), if(imported, 'purchase', 'signup'),
              if(imported, round(exp(4.5 + 0.8 * sqrt(-2 * log(1 - ${u('number', 151)})) * cos(2 * pi() * ${u('number', 152)})), 2), NULL),
              'EUR', if(imported, 'import', 'api'),
              if(imported, at - toIntervalDay(30 + toUInt32(${u('number', 153)} * 400)), NULL)
         FROM (SELECT number, ${u('number', 154)} < 0.4 AS imported,
                      {start:DateTime64(3, 'UTC')} + toIntervalSecond(toUInt32(${u('number', 155)} * ({days:UInt32} * ${DAY_S} - 60))) AS at
                 FROM numbers({untracked:UInt64}))`,
      { ...params, untracked: p.untrackedConversions },
    );
    // A sales value written back (PATCH /contacts) for 2% of conversions: it replaces revenue.
    await ch.command(
      `INSERT INTO conversion_outcomes (conversion_id, website_id, sales_value, quote_value, currency, changed_at)
       SELECT conversion_id, website_id, round(exp(6 + 0.8 * ${u('toString(conversion_id)', 160)}), 2), NULL, 'EUR', occurred_at + toIntervalDay(3)
         FROM conversions WHERE website_id = {website:UUID} AND ${u('toString(conversion_id)', 161)} < 0.02`,
      params,
    );
  });

  await step('identity merges', () =>
    // Each merged pair: the second device's id and the first's both point at the first.
    ch.command(
      `INSERT INTO identity_roots (workspace_id, identity_id, root_id, version)
       SELECT {workspace:UUID}, id, main_id, 2
         FROM ${GEN}.people ARRAY JOIN [main_id, alt_identity_id] AS id
        WHERE alt_identity_id != ''`,
      params,
    ),
  );

  const conversions = await count(ch, 'conversions', params);
  // Events per session: 1 + geometric, its mean chosen so sessions plus the conversion events
  // come to the requested total.
  const meanPerSession = Math.max(1.05, (events - conversions) / sessions);
  const lambda = 1 / Math.log(1 + 1 / (meanPerSession - 1));
  const chunks = Math.max(1, Math.ceil(events / 1_000_000));
  const t0 = Date.now();
  for (let i = 0; i < chunks; i += 1) {
    const from = Math.floor((p.people * i) / chunks);
    const to = Math.floor((p.people * (i + 1)) / chunks);
    await ch.command(
      `INSERT INTO touch_events (event_id, workspace_id, website_id, identity_id, anonymous_id, session_id, occurred_at, event_type, event_name, page,
                                 revenue, currency, session_started_at, landing_page, channel, source, medium, campaign, term, content,
                                 referrer_domain, click_ids, device_type, country, hostname, page_title, browser, operating_system, region, city,
                                 is_paid, ad_platform)
       SELECT toUUID(${uuid('p', 'j', 'k', 170)}), {workspace:UUID}, {website:UUID}, identity_id, identity_id, session_id,
              started_at + toIntervalSecond(k * 25 + toUInt32(${u('p', 'j', 'k', 171)} * k * 120)),
              if(k = 0 OR ${u('p', 'j', 'k', 172)} < 0.8, 'pageview', 'custom') AS event_type,
              if(event_type = 'custom', {event_names:Array(String)}[1 + toUInt32(${u('p', 'j', 'k', 173)} * length({event_names:Array(String)}))], ''),
              if(k = 0, landing_page, {pages:Array(String)}[${choose('{page_cum:Array(Float64)}', u('p', 'j', 'k', 174))}]) AS page,
              NULL, '', started_at, landing_page, channel, source, medium, campaign, term, content,
              referrer_domain, click_ids, device_type, country, 'www.bench.test', concat('Bench ', page), browser, operating_system, '', '',
              is_paid, ad_platform
         FROM ${GEN}.sessions
        ARRAY JOIN range(1 + least(200, toUInt32(-log(1 - ${u('p', 'j', 175)}) * {lambda:Float64}))) AS k
        WHERE p >= {from_p:UInt64} AND p < {to_p:UInt64}`,
      { ...params, lambda, from_p: from, to_p: to },
    );
    log(`events: ${i + 1}/${chunks} chunks, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  // The tracked conversions' own events, in the session they happened in.
  await ch.command(
    `INSERT INTO touch_events (event_id, workspace_id, website_id, identity_id, anonymous_id, session_id, occurred_at, event_type, event_name, page,
                               revenue, currency, session_started_at, landing_page, channel, source, medium, campaign, term, content,
                               referrer_domain, click_ids, device_type, country, hostname, page_title, browser, operating_system, region, city,
                               is_paid, ad_platform)
     SELECT conversion_id, {workspace:UUID}, {website:UUID}, identity_id, identity_id, session_id, occurred_at, event_type, event_name,
            if(event_type = 'purchase', '/checkout/complete', '/signup/thanks'), revenue, 'EUR', session_started_at, landing_page,
            channel, source, medium, campaign, term, content, referrer_domain, click_ids, device_type, country,
            'www.bench.test', 'Thank you', browser, operating_system, '', '', is_paid, ad_platform
       FROM ${GEN}.conversions`,
    params,
  );
  timings.events = (Date.now() - t0) / 1000;
  log(`events: ${timings.events.toFixed(1)} s`);

  await ch.command(`DROP DATABASE ${GEN}`);
  await step('merge parts (OPTIMIZE FINAL)', async () => {
    for (const table of ['touch_events', 'traffic_events', 'sessions', 'touches', 'touches_by_identity', 'conversions', 'outcome_keys', 'identity_roots', 'conversion_outcomes']) {
      await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
    }
  });

  // Counts of this website only: several benchmark sites can share the store.
  const one = async (sql) => Number((await ch.query(sql, params))[0].n);
  const counts = {
    events: await one('SELECT count() AS n FROM touch_events WHERE website_id = {website:UUID}'),
    sessions,
    people: p.people,
    identities: p.people + (await one('SELECT count() AS n FROM identity_roots WHERE workspace_id = {workspace:UUID}')) / 2,
    conversions,
    converters: await one("SELECT uniqExact(identity_id) AS n FROM conversions WHERE website_id = {website:UUID} AND identity_id != ''"),
    purchases: await one("SELECT count() AS n FROM conversions WHERE website_id = {website:UUID} AND event_type = 'purchase'"),
    outcomes: await one('SELECT count() AS n FROM conversion_outcomes WHERE website_id = {website:UUID}'),
  };
  return { counts, timings, start, end };
}

async function count(ch, table, params) {
  return Number((await ch.query(`SELECT count() AS n FROM ${table} WHERE website_id = {website:UUID}`, params))[0].n);
}

module.exports = { generateWorkspace, plan };
