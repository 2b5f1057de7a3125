// Messages as each channel shows them: values escaped for HTML and Slack, amounts in the alert's
// currency, the AI check (every figure verbatim, no other number).
import { checkAiText } from './ai';
import { compose } from './compose';
import { formatMetric, formatWindow } from './format';
import type { AutomationSpec } from '../spec/spec';

const spec: AutomationSpec = { version: 1, trigger: { kind: 'event', events: ['deal.stage_changed'] }, deliver: [{ channel: 'chat', to: ['C0ALERTS01'] }] };
const alert = { id: 'a1', name: 'Won', spec, domain: 'shop.test', timezone: 'America/New_York', currency: 'USD' };

describe('compose', () => {
  it('escapes a deal name for Slack (no mention, no link) and HTML, and formats the amount in its currency', async () => {
    const payload = { deal_id: 'd1', crm_id: '1', provider: 'hubspot', website_id: 'w', workspace_id: 'ws', name: '<!channel> <https://evil|win> & co', amount: 9876.5, currency: 'JPY', bucket: 'won', old_bucket: 'open', contact_emails: [], occurred_at: '2026-03-10T15:00:00Z' };
    const { message } = await compose({ alert, trigger: 'event', test: false, event: { type: 'deal.stage_changed', payload, occurredAt: payload.occurred_at }, link: 'https://x.test/v1/deals/d1/journey?website=shop.test' }, null);
    expect(message.chat).toContain('Deal won: &lt;!channel&gt; &lt;https://evil|win&gt; &amp; co (¥9,877)');
    expect(message.chat).not.toContain('<!channel>');
    expect(message.html).toContain('&lt;!channel&gt;');
    expect(message.text).toContain('Deal won: <!channel> <https://evil|win> & co (¥9,877)');
    expect(message.text).toContain('Data: https://x.test/v1/deals/d1/journey?website=shop.test');
  });

  it('formats metrics by kind and windows in the alert timezone', () => {
    expect(formatMetric('revenue', 1234.5, 'EUR')).toBe('€1,234.50');
    expect(formatMetric('conversions', 1234, 'EUR')).toBe('1,234');
    expect(formatMetric('conversion_rate', 0.0345, 'EUR')).toBe('3.5%');
    expect(formatMetric('roas', null, 'EUR')).toBe('n/a');
    expect(formatWindow('2026-03-09T04:00:00.000Z', '2026-03-10T04:00:00.000Z', 'America/New_York')).toBe('9 Mar 2026');
  });

  it('accepts a model text that states every figure and only numbers of the facts', () => {
    const facts = 'conversions (yesterday), 9 Mar 2026: 12; previous period: 10; change +20%';
    expect(checkAiText('12 conversions yesterday, up 20% from 10.', facts, ['12'])).toBeNull();
    expect(checkAiText('Conversions rose to 13.', facts, ['13'])).toMatch(/did not state|not among/);
    expect(checkAiText('12 conversions, up 21%.', facts, ['12'])).toBe("the model's message states 21, which is not among the gathered figures");
    expect(checkAiText('Conversions were steady.', facts, ['12'])).toBe("the model's message did not state the figure 12 verbatim");
  });
});
