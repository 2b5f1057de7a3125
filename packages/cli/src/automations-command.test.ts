import { loadConfig, sectionOf } from '@sightline/kit';
import { deliveriesTable, tokenOf } from './automations-command';
import { AUTOMATIONS_SETTINGS, SETTINGS_SECTIONS } from './settings';

const options = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), AUTOMATIONS_SETTINGS);

describe('sightline automations', () => {
  it('takes the bot token from exactly one of --token and --token-file', () => {
    expect(tokenOf({ token: 'xoxb-1' })).toBe('xoxb-1');
    expect(() => tokenOf({})).toThrow(/exactly one/);
    expect(() => tokenOf({ token: 'a', tokenFile: '/x' })).toThrow(/exactly one/);
  });

  it('prints deliveries as a table', () => {
    expect(deliveriesTable([])).toBe('no deliveries');
    expect(deliveriesTable([{ id: 'd1', channel: 'email', to: 'a@example.com', status: 'failed', attempts: 3, updated_at: '2026-03-10T09:00:00.000Z', error: 'SMTP 550' }]))
      .toContain('d1  email    a@example.com  failed  3         2026-03-10T09:00:00Z  SMTP 550');
  });

  it('reads its settings from the environment, refusing a half-configured model or a lease shorter than two timeouts', () => {
    expect(options({})).toEqual({});
    expect(options({ SIGHTLINE_SMTP_URL: 'smtp://mail.test:2525', SIGHTLINE_LLM_URL: 'http://llm.test/v1/', SIGHTLINE_LLM_MODEL: 'm', SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS: '1000', SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: '2000' }))
      .toEqual({ smtpUrl: 'smtp://mail.test:2525', llm: { url: 'http://llm.test/v1', model: 'm' }, callTimeoutMs: 1000, deliveryLeaseMs: 2000 });
    expect(() => options({ SIGHTLINE_LLM_URL: 'http://llm.test/v1' })).toThrow(/SIGHTLINE_LLM_URL and SIGHTLINE_LLM_MODEL/);
    expect(() => options({ SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS: '1000', SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: '1999' })).toThrow(/SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS/);
    expect(() => options({ SIGHTLINE_SMTP_URL: 'http://mail.test' })).toThrow(/SIGHTLINE_SMTP_URL/);
  });
});
