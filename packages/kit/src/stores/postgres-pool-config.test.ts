// The PostgreSQL pool settings as the entry point reads them: SIGHTLINE_POSTGRES_* validated with the
// rest of the configuration, defaults when unset. (postgres-restart.int.test.ts checks that the store
// applies them.)
import { ConfigError, loadConfig } from '../config';
import { POSTGRES_POOL_DEFAULTS } from './postgres-store';

describe('PostgreSQL pool settings', () => {
  it('defaults to a pool of 10, a 5 s connect timeout, no statement timeout and keep-alive on', () => {
    expect(loadConfig({}).postgresPool).toEqual({ size: 10, connectTimeoutMs: 30000, statementTimeoutMs: 0, idleTimeoutMs: 10000, keepAlive: true });
    expect(loadConfig({}).postgresPool).toEqual(POSTGRES_POOL_DEFAULTS);
  });

  it('reads each variable', () => {
    const config = loadConfig({
      SIGHTLINE_POSTGRES_POOL_SIZE: '25',
      SIGHTLINE_POSTGRES_CONNECT_TIMEOUT_MS: '2000',
      SIGHTLINE_POSTGRES_STATEMENT_TIMEOUT_MS: '60000',
      SIGHTLINE_POSTGRES_IDLE_TIMEOUT_MS: '0',
      SIGHTLINE_POSTGRES_KEEPALIVE: 'false',
    });
    expect(config.postgresPool).toEqual({ size: 25, connectTimeoutMs: 2000, statementTimeoutMs: 60000, idleTimeoutMs: 0, keepAlive: false });
  });

  it('refuses bad values, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({ SIGHTLINE_POSTGRES_POOL_SIZE: '0', SIGHTLINE_POSTGRES_CONNECT_TIMEOUT_MS: '-1', SIGHTLINE_POSTGRES_STATEMENT_TIMEOUT_MS: '1.5', SIGHTLINE_POSTGRES_KEEPALIVE: 'yes' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of ['SIGHTLINE_POSTGRES_POOL_SIZE', 'SIGHTLINE_POSTGRES_CONNECT_TIMEOUT_MS', 'SIGHTLINE_POSTGRES_STATEMENT_TIMEOUT_MS', 'SIGHTLINE_POSTGRES_KEEPALIVE']) {
      expect((error as Error).message).toContain(name);
    }
  });
});
