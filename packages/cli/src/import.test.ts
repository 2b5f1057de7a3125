// `sightline import` end to end: files on disk → the CLI's reader, checks and batches → crm-sync's
// admin route in a process started here (gateway + crm-sync on embedded PGlite) → the mirror and
// the outbox. The website is resolved through the gateway's admin API, as in production.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, startModules, type RunningProcess, type SqlStore } from '@sightline/kit';
import { createCrmSyncModule } from '@sightline/service-crm-sync';
import { createGatewayModule } from '@sightline/service-gateway';
import { adminRequest, type AdminConnection } from './admin-client';
import { importFile, type ImportOptions, type ImportSummary } from './import';
import { runImportCommand } from './import-command';
import { main } from './main';

/** A writable that keeps what was written (progress lines, printed output). */
function sink(isTTY = false): NodeJS.WritableStream & { isTTY: boolean; text: () => string } {
  const chunks: string[] = [];
  return {
    isTTY,
    text: () => chunks.join(''),
    write(chunk: string | Uint8Array) {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
  } as unknown as NodeJS.WritableStream & { isTTY: boolean; text: () => string };
}

describe('sightline import', () => {
  const domain = 'imports.test';
  let dataDir: string;
  let proc: RunningProcess;
  let conn: AdminConnection;
  let sql: SqlStore;
  let website: { id: string; workspace_id: string };

  const file = (name: string, text: string): string => {
    const path = join(dataDir, name);
    writeFileSync(path, text);
    return path;
  };
  const run = (kind: ImportOptions['kind'], path: string, extra: Partial<ImportOptions> = {}): Promise<ImportSummary> =>
    importFile(conn, { kind, file: path, website: domain, format: path.endsWith('.csv') ? 'csv' : 'ndjson', progress: { tty: false, stream: sink(), intervalMs: 60_000 }, ...extra });
  const outboxCount = async (type?: string): Promise<number> =>
    Number((await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM outbox WHERE website_id = $1 ${type ? 'AND type = $2' : ''}`, type ? [website.id, type] : [website.id])).rows[0]?.n);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-import-'));
    proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_BUS_NAMESPACE: `import${Date.now()}` }),
      logger: createLogger({ level: 'silent' }),
      modules: [createGatewayModule({ demo: false }), createCrmSyncModule()],
    });
    conn = { url: `http://127.0.0.1:${proc.adminPort}`, token: proc.settings.adminToken };
    const ws = await adminRequest<{ id: string }>(conn, 'POST', '/workspaces', { name: 'Imports', timezone: 'UTC', currency: 'EUR' });
    website = await adminRequest<{ id: string; workspace_id: string }>(conn, 'POST', `/workspaces/${ws.id}/websites`, { domain });
    sql = await proc.stores.sql('crm_sync');
  }, 60_000);
  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // 10k rows keep the suite quick; IMPORT_TEST_ROWS=100000 runs the done-when size (bench/import.bench.js does too).
  const spendRows = Number(process.env['IMPORT_TEST_ROWS'] ?? 10_000);

  it(`imports ${spendRows} spend rows from CSV in batches under the body limit, with plain progress lines; a re-import restates the same rows`, async () => {
    const platforms = ['google_ads', 'meta_ads'];
    const lines = ['platform,account_id,account_name,currency,date,campaign_id,campaign_name,spend,impressions,clicks'];
    for (let i = 0; i < spendRows; i += 1) {
      const day = new Date(Date.UTC(2024, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10);
      const campaign = Math.floor(i / 365);
      lines.push(`${platforms[i % 2]},acct-${i % 3},"Account ${i % 3}, main",EUR,${day},c${campaign},"Campaign ""${campaign}""",${(i % 1000) / 10},${i % 5000},${i % 70}`);
    }
    const path = file('spend.csv', `${lines.join('\n')}\n`);
    const progress = sink();
    const started = Date.now();
    const summary = await run('spend', path, { progress: { tty: false, stream: progress, intervalMs: 200 } });
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(`import test: ${spendRows} spend rows in ${seconds.toFixed(1)} s (${Math.round(spendRows / seconds)} rows/s), ${summary.requests} requests\n`);

    expect(summary).toMatchObject({ rows: spendRows, accepted: spendRows, rejected: 0, firstRejects: [] });
    expect(summary.requests).toBeGreaterThanOrEqual(20); // 500 rows at most, and under 100 kB
    const reports = async () => (await sql.query<{ payload: { platform: string; account_id: string; account_name: string; rows: Record<string, unknown>[] } }>(
      "SELECT payload FROM outbox WHERE website_id = $1 AND type = 'ads.report_imported' ORDER BY id", [website.id],
    )).rows.map((r) => r.payload);
    const first = await reports();
    expect(first).toHaveLength(summary.messages);
    expect(first.reduce((n, p) => n + p.rows.length, 0)).toBe(spendRows);
    expect(new Set(first.map((p) => `${p.platform}/${p.account_id}`)).size).toBe(6);
    expect(first[0]?.account_name).toMatch(/^Account \d, main$/);
    expect(first[0]?.rows[0]).toEqual({ date: '2024-01-01', level: 'campaign', item_id: 'c0', campaign_id: 'c0', campaign_name: 'Campaign "0"', spend: 0, impressions: 0, clicks: 0 });

    const progressLines = progress.text().trim().split('\n');
    for (const line of progressLines) expect(line).toMatch(/^import spend: \d+% read, \d+ rows \(\d+ accepted, \d+ rejected\), \d+ rows\/s, ETA .+$/);
    expect(progressLines[progressLines.length - 1]).toMatch(new RegExp(`^import spend: 100% read, ${spendRows} rows \\(${spendRows} accepted, 0 rejected\\), \\d+ rows/s, ETA 0 s$`));

    // Spend is restated, not mirrored: the same file publishes the same rows again, and attribution
    // keeps the newest copy per (website, platform, level, item, date), so nothing is counted twice.
    const again = await run('spend', path);
    expect(again).toMatchObject({ rows: spendRows, accepted: spendRows, rejected: 0 });
    const both = await reports();
    expect(both.slice(first.length).map((p) => p.rows)).toEqual(first.map((p) => p.rows));
  }, 120_000);

  it('reads CSV as RFC 4180 (quotes, doubled quotes, line breaks in fields, BOM, CRLF) and names the line of each broken row', async () => {
    const path = file('companies.csv', [
      '\uFEFFCRM ID,Name,Domain,Lifecycle Stage',
      'c1,"Acme, Inc.",Acme.com,customer',
      'c2,"The ""Best"" Co",best.example,',
      'c3,"Two',
      'Lines Ltd",two.example,lead',
      '',
      'c4,  Padded  ,pad.example,',
      'c5,too,many,fields,here',
      '"c8"x,bad,,',
      'c6, "No domain" ,,',
      'c9,Say "hi",,',
      'c7,"never closed,x.example,',
      '',
    ].join('\r\n'));
    const summary = await run('companies', path);
    expect(summary.firstRejects).toEqual([
      'line 8: has 5 fields; the header has 4',
      'line 9: text follows the closing quote of a field (inside a quoted field, write a quote as "")',
      'line 11: a quote inside an unquoted field (quote the whole field and write the quote as "")',
      'line 12: a quoted field is never closed (the rest of the file was read into it)',
    ]);
    expect(summary).toMatchObject({ rows: 9, accepted: 5, rejected: 4 });
    const companies = await sql.query<{ crm_id: string; name: string; domain: string | null; lifecycle_stage: string | null }>(
      "SELECT crm_id, name, domain, lifecycle_stage FROM companies WHERE website_id = $1 AND provider = 'import' ORDER BY crm_id", [website.id],
    );
    expect(companies.rows).toEqual([
      { crm_id: 'c1', name: 'Acme, Inc.', domain: 'acme.com', lifecycle_stage: 'customer' },
      { crm_id: 'c2', name: 'The "Best" Co', domain: 'best.example', lifecycle_stage: null },
      { crm_id: 'c3', name: 'Two\r\nLines Ltd', domain: 'two.example', lifecycle_stage: 'lead' },
      { crm_id: 'c4', name: 'Padded', domain: 'pad.example', lifecycle_stage: null },
      { crm_id: 'c6', name: 'No domain', domain: null, lifecycle_stage: null },
    ]);
  });

  it('reports every rejected NDJSON row by line (printed, and all in --rejects) and fails the command', async () => {
    const path = file('contacts.ndjson', [
      '{"crm_id":"p1","email":"Ann@Example.com","lifecycle_stage":"lead","company_crm_id":"c1","updated_at":"2024-03-01T10:00:00Z"}',
      '{"email":"bob@example.com","company_crm_id":"c1","crm_id":null}',
      '',
      '{"crm_id":"p3","email":"not-an-email"}',
      '{not json',
      '{"crm_id":"p4","nickname":"x"}',
      '["array"]',
      '{"lifecycle_stage":"lead"}',
      '{"crm_id":"p5","updated_at":"2024-02-30"}',
      '{"crm_id":42,"email":"num@example.com","updated_at":"2024-03-01 09:30"}',
    ].join('\n'));
    const rejects = join(dataDir, 'contacts.rejects.txt');
    const stdout = sink();
    await expect(runImportCommand(() => conn, { kind: 'contacts', file: path, website: domain, rejects }, { stdout, stderr: sink(), progressIntervalMs: 60_000 }))
      .rejects.toThrow('6 of 9 rows were rejected');
    const expected = [
      'line 4: email must be an email address (got "not-an-email")',
      expect.stringMatching(/^line 5: not valid JSON \(.+\)$/),
      'line 6: unknown field "nickname"',
      'line 7: a row must be an object',
      'line 8: crm_id or email is required',
      'line 9: updated_at must be a date or date-time like 2024-05-31T14:00:00Z (got "2024-02-30")',
    ];
    const printed = stdout.text().trim().split('\n');
    expect(printed.slice(0, 6)).toEqual(expected);
    expect(printed[6]).toMatch(/^imported .*contacts\.ndjson \(contacts\) into imports\.test: 9 rows in [\d.]+ s \(\d+ rows\/s\); 3 accepted, 6 rejected; \d+ messages published$/);
    expect(readFileSync(rejects, 'utf8').trim().split('\n')).toEqual(expected);

    const contacts = await sql.query<{ crm_id: string; email: string; company_crm_id: string | null; updated_at: Date }>(
      "SELECT crm_id, email, company_crm_id, updated_at FROM crm_contacts WHERE website_id = $1 AND provider = 'import' ORDER BY crm_id", [website.id],
    );
    expect(contacts.rows.map((c) => [c.crm_id, c.email, c.company_crm_id])).toEqual([['42', 'num@example.com', null], ['bob@example.com', 'bob@example.com', 'c1'], ['p1', 'ann@example.com', 'c1']]);
    expect(contacts.rows[0]?.updated_at.toISOString()).toBe('2024-03-01T09:30:00.000Z');
    const lead = await sql.query<{ payload: { stage: string; email: string; occurred_at: string } }>("SELECT payload FROM outbox WHERE website_id = $1 AND type = 'milestone.reached'", [website.id]);
    expect(lead.rows.map((r) => r.payload)).toEqual([expect.objectContaining({ stage: 'lead', email: 'ann@example.com', occurred_at: '2024-03-01T10:00:00.000Z' })]);
    const members = await sql.query<{ payload: { subject: string; members: { email: string }[] } }>(
      "SELECT payload FROM outbox WHERE website_id = $1 AND type = 'crm.members_synced' ORDER BY id DESC LIMIT 1", [website.id],
    );
    expect(members.rows[0]?.payload).toMatchObject({ subject: 'company', members: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }] });
  });

  it('imports deals into import pipelines built from the rows; a re-import publishes nothing; a stage change publishes once', async () => {
    const stages = [['Discovery', 'open'], ['Proposal', 'open'], ['Closed Won', 'won'], ['Closed Lost', 'lost']] as const;
    const lines = ['crm_id,name,amount,currency,pipeline,stage,bucket,company_crm_id,contact_crm_ids,created_at,closed_at'];
    const count = 200;
    for (let i = 0; i < count; i += 1) {
      const [stage, bucket] = stages[i % 4]!;
      const closed = bucket === 'open' ? '' : `2024-04-${String((i % 28) + 1).padStart(2, '0')}`;
      lines.push(`d${i},Deal ${i},${100 + i},eur,Sales,${stage},${bucket},c1,p1;bob@example.com,2024-03-${String((i % 28) + 1).padStart(2, '0')}T12:00:00Z,${closed}`);
    }
    lines.push('solo,Won without a stage,50,EUR,,,won,,,2024-03-01,2024-03-02');
    const path = file('deals.csv', `${lines.join('\n')}\n`);
    const started = Date.now();
    const summary = await run('deals', path, { batchRows: 60 }); // several batches: stages merge into the stored pipeline
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(`import test: ${count + 1} deals in ${seconds.toFixed(1)} s (${Math.round((count + 1) / seconds)} rows/s)\n`);
    expect(summary).toMatchObject({ rows: count + 1, accepted: count + 1, rejected: 0 });

    const pipelines = await sql.query<{ id: string; name: string; stages: { id: string; name: string; position: number; bucket: string }[] }>(
      "SELECT id, name, stages FROM pipelines WHERE website_id = $1 AND provider = 'import' ORDER BY id", [website.id],
    );
    expect(pipelines.rows).toEqual([
      { id: 'imported_deals', name: 'Imported deals', stages: [{ id: 'won', name: 'Won', position: 0, bucket: 'won' }] },
      { id: 'sales', name: 'Sales', stages: stages.map(([name, bucket], position) => ({ id: name.toLowerCase().replace(' ', '_'), name, position, bucket })) },
    ]);
    const buckets = await sql.query<{ bucket: string; n: string }>(
      "SELECT bucket, count(*)::text AS n FROM deals WHERE website_id = $1 AND provider = 'import' GROUP BY bucket ORDER BY bucket", [website.id],
    );
    expect(buckets.rows).toEqual([{ bucket: 'lost', n: String(count / 4) }, { bucket: 'open', n: String(count / 2) }, { bucket: 'won', n: String(count / 4 + 1) }]);
    const deal = await sql.query<{ payload: Record<string, unknown> }>("SELECT payload FROM outbox WHERE website_id = $1 AND type = 'deal.created' AND payload->>'crm_id' = 'd2'", [website.id]);
    expect(deal.rows[0]?.payload).toMatchObject({
      provider: 'import', amount: 102, currency: 'EUR', pipeline_id: 'sales', stage_id: 'closed_won', stage_name: 'Closed Won', bucket: 'won',
      contact_emails: ['ann@example.com', 'bob@example.com'],
    });
    expect(await outboxCount('deal.created')).toBe(count + 1);

    const before = await outboxCount();
    const again = await run('deals', path);
    expect(again).toMatchObject({ accepted: count + 1, rejected: 0, messages: 0 });
    expect(await outboxCount()).toBe(before);

    const moved = file('deal-moved.ndjson', '{"crm_id":"d0","name":"Deal 0","amount":100,"currency":"EUR","pipeline":"Sales","stage":"Closed Won","company_crm_id":"c1","contact_crm_ids":["p1","bob@example.com"],"created_at":"2024-03-01T12:00:00Z","closed_at":"2024-05-01T00:00:00Z"}\n');
    expect(await run('deals', moved)).toMatchObject({ accepted: 1, messages: 2 });
    expect(await outboxCount()).toBe(before + 2);
    const changed = await sql.query<{ type: string; payload: Record<string, unknown> }>('SELECT type, payload FROM outbox WHERE website_id = $1 ORDER BY id DESC LIMIT 2', [website.id]);
    expect(changed.rows.map((r) => r.type).sort()).toEqual(['deal.stage_changed', 'milestone.reached']);
    expect(changed.rows.find((r) => r.type === 'deal.stage_changed')?.payload).toMatchObject({ old_stage_id: 'discovery', stage_id: 'closed_won', bucket: 'won', old_bucket: 'open' });
  }, 120_000);

  it('groups order lines and refunds into orders, keeps each order in one request and maps server rejections to lines', async () => {
    const path = file('orders.csv', [
      'order_id,ordered_at,currency,customer_email,product_id,product_name,quantity,unit_price,refund_id,refunded_at,refund_amount',
      'o1,2024-05-01T10:00:00Z,EUR,A@x.test,sku1,Shirt,2,20,,,',
      'o1,2024-05-01T10:00:00Z,EUR,,sku2,Hat,1,15,,,',
      'o1,2024-05-01T10:00:00Z,EUR,,sku1,,1,,r1,2024-05-03,20',
      'o2,2024-05-02,usd,,sku3,,,9.5,,,',
      'o1,2024-05-01T10:00:00Z,EUR,,sku9,Late,1,5,,,',
      'o3,2024-05-02,EUR,,,,,,,,',
      'o4,2024-05-02,EUR,,sku4,,1,3,,,',
      'o4,2024-05-02,GBP,,sku5,,1,3,,,',
    ].join('\n'));
    const summary = await run('orders', path);
    expect(summary.firstRejects).toEqual([
      'line 6: the rows of order o1 must be contiguous (it began on line 2)',
      'line 7: a row needs product_id (an order line) or refund_id (a refund)',
      'line 9: currency differs from the first row of order o4',
    ]);
    expect(summary).toMatchObject({ rows: 8, accepted: 5, rejected: 3, messages: 1 });
    const imported = await sql.query<{ payload: { platform: string; orders: unknown[] } }>("SELECT payload FROM outbox WHERE website_id = $1 AND type = 'store.orders_imported'", [website.id]);
    expect(imported.rows.map((r) => r.payload)).toEqual([expect.objectContaining({
      platform: 'import',
      orders: [
        {
          order_id: 'o1', ordered_at: '2024-05-01T10:00:00.000Z', customer_email: 'a@x.test', currency: 'EUR',
          lines: [{ product_id: 'sku1', name: 'Shirt', quantity: 2, unit_price: 20, unit_cost: null }, { product_id: 'sku2', name: 'Hat', quantity: 1, unit_price: 15, unit_cost: null }],
          refunds: [{ refund_id: 'r1', refunded_at: '2024-05-03T00:00:00.000Z', amount: 20, product_id: 'sku1', quantity: 1 }],
        },
        { order_id: 'o2', ordered_at: '2024-05-02T00:00:00.000Z', customer_email: null, currency: 'USD', lines: [{ product_id: 'sku3', name: 'sku3', quantity: 1, unit_price: 9.5, unit_cost: null }], refunds: [] },
        { order_id: 'o4', ordered_at: '2024-05-02T00:00:00.000Z', customer_email: null, currency: 'EUR', lines: [{ product_id: 'sku4', name: 'sku4', quantity: 1, unit_price: 3, unit_cost: null }], refunds: [] },
      ],
    })]);
  });

  it('refuses a file whose header names unknown columns or lacks required ones, before sending anything', async () => {
    await expect(run('spend', file('bad-header.csv', 'platform,account_id,currency,date,spend,cost_center\n'))).rejects.toThrow(/unknown column "cost_center"; spend columns are: platform, account_id/);
    await expect(run('deals', file('no-name.csv', 'crm_id,created_at\nd1,2024-01-01\n'))).rejects.toThrow(/missing column "name"/);
  });

  it('is a registered command: --schema prints a row schema, and a clean import exits normally', async () => {
    const out: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const writeErr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await main(['node', 'sightline', 'import', 'spend', '--schema']);
      expect(JSON.parse(out.join(''))).toMatchObject({ type: 'object', required: ['platform', 'account_id', 'currency', 'date', 'spend'] });
      out.length = 0;
      const path = file('one.csv', 'crm_id,name\nc9,Nine\n');
      await main(['node', 'sightline', '--admin-url', conn.url, '--admin-token', conn.token, 'import', 'companies', path, '--website', domain]);
      expect(out.join('')).toMatch(/into imports\.test: 1 rows in .*; 1 accepted, 0 rejected; 1 messages published/);
      await expect(main(['node', 'sightline', 'import', 'invoices', path, '--website', domain])).rejects.toThrow('unknown import kind "invoices"; kinds: deals, companies, contacts, spend, orders');
    } finally {
      write.mockRestore();
      writeErr.mockRestore();
    }
  });

  it('imports the example files of every kind without a rejection, by website id and workspace id too', async () => {
    const examples = join(__dirname, '..', '..', '..', 'services', 'crm-sync', 'examples');
    const ws = await adminRequest<{ id: string }>(conn, 'POST', '/workspaces', { name: 'Examples', timezone: 'UTC', currency: 'EUR' });
    const site = await adminRequest<{ id: string; workspace_id: string }>(conn, 'POST', `/workspaces/${ws.id}/websites`, { domain: 'examples.test' });
    const counts: Record<string, number> = { companies: 3, contacts: 3, deals: 3, spend: 3, orders: 4 };
    for (const [kind, name] of [['companies', 'companies.csv'], ['contacts', 'contacts.ndjson'], ['deals', 'deals.csv'], ['spend', 'spend.csv'], ['orders', 'orders.csv']] as const) {
      const path = join(examples, name);
      const summary = await importFile(conn, { kind, file: path, website: site.id, workspace: site.workspace_id, format: name.endsWith('.csv') ? 'csv' : 'ndjson', progress: { tty: false, stream: sink(), intervalMs: 60_000 } });
      expect({ kind, ...summary, seconds: 0, requests: 0 }).toMatchObject({ kind, rows: counts[kind], accepted: counts[kind], rejected: 0, firstRejects: [] });
    }
    const deals = await sql.query<{ crm_id: string; bucket: string; contact_crm_ids: string[] }>(
      "SELECT crm_id, bucket, contact_crm_ids FROM deals WHERE website_id = $1 AND provider = 'import' ORDER BY crm_id", [site.id],
    );
    expect(deals.rows).toEqual([
      { crm_id: 'd-1', bucket: 'won', contact_crm_ids: ['c-100'] },
      { crm_id: 'd-2', bucket: 'open', contact_crm_ids: ['c-101'] },
      { crm_id: 'd-3', bucket: 'lost', contact_crm_ids: ['carol@initech.example'] },
    ]);
    const won = await sql.query<{ payload: { contact_emails: string[] } }>("SELECT payload FROM outbox WHERE website_id = $1 AND type = 'deal.created' AND payload->>'crm_id' = 'd-1'", [site.id]);
    expect(won.rows[0]?.payload.contact_emails).toEqual(['ann@acme.com']);
  });

  it('answers malformed batches with problem documents', async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${conn.url}/admin${path}`, {
        method: 'POST', headers: { authorization: `Bearer ${conn.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> };
    };
    const scope = { website_id: website.id, workspace_id: website.workspace_id };
    const unknownKind = await post('/crm/imports/invoices', { ...scope, rows: [{}] });
    expect(unknownKind).toMatchObject({ status: 400, body: { allowed: ['deals', 'companies', 'contacts', 'spend', 'orders'] } });
    expect(unknownKind.type).toContain('application/problem+json');
    expect((await post('/crm/imports/spend', { rows: [{}] })).status).toBe(400);
    expect((await post('/crm/imports/spend', { ...scope, rows: Array.from({ length: 501 }, () => ({})) })).status).toBe(400);
    expect(await post('/crm/imports/spend', { ...scope, rows: [{ platform: 'google_ads' }] })).toMatchObject({
      status: 200, body: { accepted: 0, rejected: [{ index: 0, reason: 'account_id is required' }], messages: 0 },
    });
  });
});
