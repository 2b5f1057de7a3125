// The baseline of the query benchmark: the same workspace in PostgreSQL, and five-model
// attribution by channel written the way a team would write it in plain SQL (window functions
// over touches joined to conversions). Only the tables that query reads are copied: sessions
// (touches), conversions, written-back outcome values and identity roots, read back out of
// ClickHouse in slices and inserted through unnest() arrays (no COPY client is installed).
const { Client } = require('pg');

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SLICE_ROWS = 100_000;

const SCHEMA = `
  CREATE TABLE touches (session_id text NOT NULL, identity_id text NOT NULL, started_at timestamptz NOT NULL,
                        channel text NOT NULL, source text NOT NULL, medium text NOT NULL, campaign text NOT NULL);
  CREATE TABLE conversions (conversion_id uuid NOT NULL, identity_id text NOT NULL, occurred_at timestamptz NOT NULL,
                            event_type text NOT NULL, revenue double precision);
  CREATE TABLE conversion_outcomes (conversion_id uuid NOT NULL, sales_value double precision);
  CREATE TABLE identity_roots (identity_id text NOT NULL, root_id text NOT NULL);`;

/** Keys and indexes, built after the bulk load (faster than maintaining them row by row). */
const INDEXES = `
  ALTER TABLE touches ADD PRIMARY KEY (session_id);
  ALTER TABLE conversions ADD PRIMARY KEY (conversion_id);
  ALTER TABLE conversion_outcomes ADD PRIMARY KEY (conversion_id);
  ALTER TABLE identity_roots ADD PRIMARY KEY (identity_id);
  CREATE INDEX touches_identity ON touches (identity_id, started_at);
  CREATE INDEX touches_started ON touches (started_at);
  CREATE INDEX conversions_occurred ON conversions (occurred_at);
  ANALYZE;`;

/**
 * Each table: how to read it from ClickHouse (one row per key, as the service reads it) and how
 * to insert a slice of its rows into PostgreSQL from parallel arrays.
 */
const TABLES = [
  {
    name: 'touches',
    key: 'session_id',
    select: `SELECT session_id, identity_id, toUnixTimestamp64Milli(started_at) AS t, toString(channel) AS channel, source, medium, campaign
               FROM touches WHERE website_id = {website:UUID} AND cityHash64(session_id) % {slices:UInt64} = {slice:UInt64}
              ORDER BY session_id LIMIT 1 BY session_id`,
    columns: ['session_id', 'identity_id', 't', 'channel', 'source', 'medium', 'campaign'],
    insert: `INSERT INTO touches SELECT s, i, to_timestamp(t / 1000.0), c, so, m, ca
               FROM unnest($1::text[], $2::text[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(s, i, t, c, so, m, ca)`,
  },
  {
    name: 'conversions',
    key: 'conversion_id',
    select: `SELECT toString(conversion_id) AS conversion_id, identity_id, toUnixTimestamp64Milli(occurred_at) AS t, toString(event_type) AS event_type, revenue
               FROM conversions WHERE website_id = {website:UUID} AND cityHash64(conversion_id) % {slices:UInt64} = {slice:UInt64}
              ORDER BY conversion_id LIMIT 1 BY conversion_id`,
    columns: ['conversion_id', 'identity_id', 't', 'event_type', 'revenue'],
    insert: `INSERT INTO conversions SELECT c, i, to_timestamp(t / 1000.0), e, r
               FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::text[], $5::float8[]) AS u(c, i, t, e, r)`,
  },
  {
    name: 'conversion_outcomes',
    key: 'conversion_id',
    select: `SELECT toString(conversion_id) AS conversion_id, argMax(sales_value, changed_at) AS sales_value
               FROM conversion_outcomes WHERE website_id = {website:UUID} AND cityHash64(conversion_id) % {slices:UInt64} = {slice:UInt64}
              GROUP BY conversion_id HAVING sales_value IS NOT NULL`,
    columns: ['conversion_id', 'sales_value'],
    insert: 'INSERT INTO conversion_outcomes SELECT * FROM unnest($1::uuid[], $2::float8[])',
  },
  {
    name: 'identity_roots',
    key: 'identity_id',
    select: `SELECT identity_id, argMax(root_id, version) AS root_id
               FROM identity_roots WHERE workspace_id = {workspace:UUID} AND cityHash64(identity_id) % {slices:UInt64} = {slice:UInt64}
              GROUP BY identity_id`,
    columns: ['identity_id', 'root_id'],
    insert: 'INSERT INTO identity_roots SELECT * FROM unnest($1::text[], $2::text[])',
  },
];

/**
 * Credit per channel under all five models, for conversions in [$1, $2) with a lookback of $3
 * days. Person = identity's merge root; a conversion without an identity is a person of its own
 * and, like any conversion without a touch in its lookback, goes to 'Unattributed'. U-shaped is
 * 40/20/40 (one touch 100%, two 50/50); time decay halves a touch's weight every $4 days.
 */
const FIVE_MODELS_BY_CHANNEL = `
WITH conv AS (
  SELECT c.conversion_id, c.occurred_at,
         COALESCE(o.sales_value, c.revenue, 0) AS value,
         CASE WHEN c.identity_id = '' THEN 'conversion:' || c.conversion_id::text ELSE COALESCE(r.root_id, c.identity_id) END AS person
    FROM conversions c
    LEFT JOIN conversion_outcomes o ON o.conversion_id = c.conversion_id
    LEFT JOIN identity_roots r ON r.identity_id = c.identity_id
   WHERE c.occurred_at >= $1 AND c.occurred_at < $2
),
touch AS (
  SELECT t.session_id, t.started_at, t.channel, COALESCE(r.root_id, t.identity_id) AS person
    FROM touches t
    LEFT JOIN identity_roots r ON r.identity_id = t.identity_id
   WHERE t.started_at >= $1::timestamptz - make_interval(days => $3::int) AND t.started_at < $2
),
journey AS (
  SELECT c.conversion_id, c.value, t.channel,
         row_number() OVER (PARTITION BY c.conversion_id ORDER BY t.started_at, t.session_id) AS pos,
         count(*) OVER (PARTITION BY c.conversion_id) AS n,
         power(0.5::float8, extract(epoch FROM c.occurred_at - t.started_at)::float8 / ($4::float8 * 86400.0::float8)) AS decay
    FROM conv c
    JOIN touch t ON t.person = c.person
                AND t.started_at <= c.occurred_at
                AND t.started_at >= c.occurred_at - make_interval(days => $3::int)
),
credit AS (
  SELECT channel, value,
         (pos = 1)::int::float8 AS first_touch,
         (pos = n)::int::float8 AS last_touch,
         1::float8 / n AS linear,
         CASE WHEN n = 1 THEN 1::float8 WHEN n = 2 THEN 0.5::float8
              WHEN pos = 1 OR pos = n THEN 0.4::float8 ELSE 0.2::float8 / (n - 2) END AS u_shaped,
         decay / sum(decay) OVER (PARTITION BY conversion_id) AS time_decay
    FROM journey
  UNION ALL
  SELECT 'Unattributed', c.value, 1, 1, 1, 1, 1
    FROM conv c
   WHERE NOT EXISTS (SELECT 1 FROM touch t WHERE t.person = c.person AND t.started_at <= c.occurred_at
                                             AND t.started_at >= c.occurred_at - make_interval(days => $3::int))
)
SELECT channel,
       sum(first_touch) AS first_touch_conversions, sum(first_touch * value) AS first_touch_revenue,
       sum(last_touch) AS last_touch_conversions, sum(last_touch * value) AS last_touch_revenue,
       sum(linear) AS linear_conversions, sum(linear * value) AS linear_revenue,
       sum(u_shaped) AS u_shaped_conversions, sum(u_shaped * value) AS u_shaped_revenue,
       sum(time_decay) AS time_decay_conversions, sum(time_decay * value) AS time_decay_revenue
  FROM credit
 GROUP BY channel
 ORDER BY channel`;

const MODELS = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'];

/** A fresh database on the local server, with the workspace's tables copied from ClickHouse. */
async function loadPostgres(ch, { websiteId, workspaceId, log }) {
  const database = `sightline_bench_query_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  const drop = async () => {
    await client.end().catch(() => {});
    const c = new Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await c.end();
  };
  try {
    await client.query(SCHEMA);
    const rows = {};
    const t0 = Date.now();
    for (const table of TABLES) {
      const total = Number((await ch.query(`SELECT count() AS n FROM ${table.name}`))[0].n);
      const slices = Math.max(1, Math.ceil(total / SLICE_ROWS));
      const fetch = (slice) => ch.query(table.select, { website: websiteId, workspace: workspaceId, slices, slice });
      rows[table.name] = 0;
      // The next slice is read from chDB while this one goes into PostgreSQL.
      let next = fetch(0);
      for (let slice = 0; slice < slices; slice += 1) {
        const part = await next;
        if (slice + 1 < slices) next = fetch(slice + 1);
        if (part.length === 0) continue;
        await client.query(table.insert, table.columns.map((c) => part.map((r) => r[c])));
        rows[table.name] += part.length;
      }
      log(`postgres: ${table.name} ${rows[table.name]} rows (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
    const copySeconds = (Date.now() - t0) / 1000;
    const t1 = Date.now();
    await client.query(INDEXES);
    const indexSeconds = (Date.now() - t1) / 1000;
    log(`postgres: keys, indexes and ANALYZE ${indexSeconds.toFixed(1)} s`);
    // Room for the joins and window sorts in memory, as a team tuning this query would give it.
    await client.query("SET work_mem = '256MB'");
    return { client, database, rows, copySeconds, indexSeconds, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** Runs the five-model query; returns per-channel credit as { channel: { model: {conversions, revenue} } }. */
async function fiveModelsByChannel(client, { from, to, lookbackDays = 90, halfLifeDays = 7 }) {
  const { rows } = await client.query(FIVE_MODELS_BY_CHANNEL, [from, to, lookbackDays, halfLifeDays]);
  const out = {};
  for (const r of rows) {
    out[r.channel] = Object.fromEntries(MODELS.map((m) => [m, { conversions: Number(r[`${m}_conversions`]), revenue: Number(r[`${m}_revenue`]) }]));
  }
  return out;
}

module.exports = { loadPostgres, fiveModelsByChannel, MODELS, FIVE_MODELS_BY_CHANNEL };
