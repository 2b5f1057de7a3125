// The import rules that need no database: row checks (as the CLI and the route both run them),
// pipelines built from deal rows, and spend and orders turned into messages. The route itself,
// with the mirror and the outbox, is tested through the CLI (packages/cli/src/import.test.ts).
import { messageValidator } from '@sightline/proto-schemas';
import { mergePipelines, spendReports, storeImports } from './convert';
import { checkImportRow, toInstant } from './rows';
import type { DealImportRow, OrderImportRow, SpendImportRow } from './schemas';

const scope = { websiteId: '00000000-0000-4000-8000-000000000001', workspaceId: '00000000-0000-4000-8000-000000000002' };

function ok<T>(check: { ok: true; row: T } | { ok: false; reason: string }): T {
  if (!check.ok) throw new Error(check.reason);
  return check.row;
}

describe('import rows', () => {
  it('reads instants as dates, date-times and offsets, UTC when none is given', () => {
    expect(toInstant('2024-05-31')).toBe('2024-05-31T00:00:00.000Z');
    expect(toInstant('2024-05-31 14:05')).toBe('2024-05-31T14:05:00.000Z');
    expect(toInstant('2024-05-31T14:05:06.789123+0200')).toBe('2024-05-31T12:05:06.789Z');
    for (const bad of ['2024-02-30', '2024-13-01', '31/05/2024', '2024-05-31T24:00', 'yesterday']) expect(toInstant(bad)).toBeNull();
  });

  it('takes CSV text as typed values: numbers, ";" lists, capital currencies, blanks as absent', () => {
    const deal = ok(checkImportRow('deals', { crm_id: ' d1 ', name: 'Big', amount: '1200.50', currency: 'eur', contact_crm_ids: 'p1; p2;', stage: '', created_at: '2024-01-02' }));
    expect(deal).toEqual({ crm_id: 'd1', name: 'Big', amount: 1200.5, currency: 'EUR', contact_crm_ids: ['p1', 'p2'], created_at: '2024-01-02' });
    expect(checkImportRow('spend', { platform: 'google_ads', account_id: 1, currency: 'USD', date: '2024-01-01', spend: 'Infinity' })).toEqual({ ok: false, reason: 'spend must be a finite number' });
    expect(checkImportRow('spend', { platform: 'google_ads', account_id: 'a', currency: 'USD', date: '2024-01-01', spend: 'ten' })).toEqual({ ok: false, reason: 'spend must be a number (got "ten")' });
    expect(checkImportRow('deals', { crm_id: 'd', name: 'n', created_at: 'x', bucket: 'closed' })).toEqual({ ok: false, reason: 'bucket must be one of open, won, lost, other (got "closed")' });
  });

  it('applies the rules across fields: contacts need an id or an email, spend an item, orders a line or a refund', () => {
    expect(checkImportRow('contacts', { lifecycle_stage: 'lead' })).toEqual({ ok: false, reason: 'crm_id or email is required' });
    expect(checkImportRow('spend', { platform: 'meta_ads', account_id: 'a', currency: 'EUR', date: '2024-01-01', spend: 1, level: 'keyword' }))
      .toEqual({ ok: false, reason: 'item_id is required for level keyword' });
    const order = { order_id: 'o1', ordered_at: '2024-01-01', currency: 'EUR' };
    expect(checkImportRow('orders', { ...order, product_id: 'p' })).toEqual({ ok: false, reason: 'unit_price is required on an order line' });
    expect(checkImportRow('orders', { ...order, refund_id: 'r', refund_amount: 3 })).toEqual({ ok: false, reason: 'a refund row (refund_id set) needs refunded_at' });
    expect(checkImportRow('orders', { ...order, refund_id: 'r', refund_amount: 3, refunded_at: '2024-01-02', unit_price: 3 }).ok).toBe(false);
  });

  it('builds import pipelines from deal rows: stored stages kept, new ones appended, buckets set by the rows that give one', () => {
    const rows = [
      { crm_id: 'a', name: 'A', created_at: '2024-01-01', pipeline: 'Sales', stage: 'Demo' },
      { crm_id: 'b', name: 'B', created_at: '2024-01-01', pipeline: 'Sales', stage: 'Signed', bucket: 'won' },
      { crm_id: 'c', name: 'C', created_at: '2024-01-01', pipeline: 'Sales', stage: 'Lead', bucket: 'other' },
      { crm_id: 'd', name: 'D', created_at: '2024-01-01', bucket: 'lost' },
      { crm_id: 'e', name: 'E', created_at: '2024-01-01' },
    ] satisfies DealImportRow[];
    const stored = new Map([['sales', { id: 'sales', name: 'Sales', stages: [{ id: 'lead', name: 'Lead', position: 0, bucket: 'open' as const }] }]]);
    expect(mergePipelines(rows, stored)).toEqual([
      { id: 'sales', name: 'Sales', stages: [
        { id: 'lead', name: 'Lead', position: 0, bucket: 'other' },
        { id: 'demo', name: 'Demo', position: 1, bucket: 'open' },
        { id: 'signed', name: 'Signed', position: 2, bucket: 'won' },
      ] },
      { id: 'imported_deals', name: 'Imported deals', stages: [{ id: 'lost', name: 'Lost', position: 0, bucket: 'lost' }] },
    ]);
    expect(stored.get('sales')?.stages[0]?.bucket).toBe('open'); // the stored copy is not changed in place
  });

  it('turns spend rows into one valid ads.report_imported per platform, account and currency', () => {
    const row = (extra: Partial<SpendImportRow>): SpendImportRow => ({ platform: 'google_ads', account_id: '1', currency: 'EUR', date: '2024-01-01', spend: 2, ...extra });
    const reports = spendReports([
      row({ campaign_id: 'c1' }),
      row({ campaign_id: 'c1', ad_set_id: 's1', ad_id: 'ad1', impressions: 10 }),
      row({ account_name: 'Main' }),
      row({ currency: 'USD', level: 'keyword', item_id: 'kw' }),
    ], scope);
    expect(reports.map((r) => [r.account_name, r.currency, r.rows.map((x) => `${x.level}:${x.item_id}`)])).toEqual([
      ['Main', 'EUR', ['campaign:c1', 'ad:ad1', 'account:1']],
      [null, 'USD', ['keyword:kw']],
    ]);
    for (const payload of reports) {
      const envelope = { id: 'm', type: 'ads.report_imported', version: 1, occurred_at: '2024-01-01T00:00:00Z', workspace_id: scope.workspaceId, website_id: scope.websiteId, source: 'import', payload };
      expect(messageValidator.validateEnvelope(envelope)).toBeNull();
    }
  });

  it('assembles orders from contiguous rows and refuses a row that would restate an order without its earlier rows', () => {
    const rows: OrderImportRow[] = [
      { order_id: '1', ordered_at: '2024-01-01', currency: 'EUR', product_id: 'p', unit_price: 5 },
      { order_id: '1', ordered_at: '2024-01-01', currency: 'EUR', refund_id: 'r', refunded_at: '2024-01-02', refund_amount: 5 },
      { order_id: '1', platform: 'shopify', ordered_at: '2024-01-01', currency: 'EUR', product_id: 'p', unit_price: 5 },
      { order_id: '1', ordered_at: '2024-01-01', currency: 'EUR', product_id: 'q', unit_price: 1 },
    ];
    const { imports, rejected } = storeImports(rows.map((row, index) => ({ index, row })), scope);
    expect(rejected).toEqual([{ index: 3, reason: 'the rows of order 1 must be contiguous' }]);
    expect(imports.map((m) => [m.platform, m.orders.map((o) => `${o.order_id}:${o.lines.length}/${o.refunds.length}`)])).toEqual([['import', ['1:1/1']], ['shopify', ['1:1/0']]]);
  });
});
