import { ConfigError, loadConfig, sectionOf, type ConfigSection } from './config';

const SMTP: ConfigSection<{ url?: string; port: number }> = {
  service: 'mailer',
  variables: {
    TEST_SMTP_URL: { schema: { type: 'string', pattern: '^smtps?://' }, description: 'SMTP server.' },
    TEST_SMTP_PORT: { schema: { type: 'integer', minimum: 1, maximum: 65535, default: 25 }, description: 'Port.' },
  },
  build: (values) => ({ ...(values['TEST_SMTP_URL'] !== undefined ? { url: String(values['TEST_SMTP_URL']) } : {}), port: Number(values['TEST_SMTP_PORT']) }),
};

describe('configuration', () => {
  it('builds each section from its variables, with defaults and coercion', () => {
    const config = loadConfig({ TEST_SMTP_URL: ' smtp://mail.local ', TEST_SMTP_PORT: '2525' }, [SMTP]);
    expect(sectionOf(config, SMTP)).toEqual({ url: 'smtp://mail.local', port: 2525 });
    expect(sectionOf(loadConfig({}, [SMTP]), SMTP)).toEqual({ port: 25 });
  });

  it('validates section variables with the rest, naming every bad one', () => {
    let error: unknown;
    try {
      loadConfig({ TEST_SMTP_URL: 'mail.local', TEST_SMTP_PORT: '0', SIGHTLINE_PORT: 'x' }, [SMTP]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['TEST_SMTP_URL', 'TEST_SMTP_PORT', 'SIGHTLINE_PORT']) expect(message).toContain(name);
  });

  it('turns a section that refuses its values into a ConfigError', () => {
    const strict: ConfigSection<null> = { ...SMTP, service: 'strict', build: () => { throw new Error('TEST_SMTP_URL: needs a port'); } } as ConfigSection<null>;
    expect(() => loadConfig({}, [strict])).toThrow(/invalid configuration:\n {2}TEST_SMTP_URL: needs a port/);
  });

  it('refuses a variable declared by two sections', () => {
    expect(() => loadConfig({}, [SMTP, { ...SMTP, service: 'other' }])).toThrow(/TEST_SMTP_URL is declared twice/);
  });

  it('gives a section that was not loaded its defaults', () => {
    expect(sectionOf(loadConfig({}), SMTP)).toEqual({ port: 25 });
  });
});
