// The Salesforce connector: the REST API of one org (query, sObject PATCH), logged in through the
// OAuth 2.0 JWT bearer flow, a refresh token or a session (auth.ts). Settings map the org onto
// Sightline's records and bound its API use (settings.ts). The login host is
// https://login.salesforce.com unless the credentials name another (login_url: a sandbox's
// test.salesforce.com or a My Domain) or the module options do (tests); every API call goes to the
// instance_url the login answers. It knows nothing of the mirror, the bus or the schedule.
//
// Plain fetch rather than jsforce: the connector needs five REST resources, the Sforce-Limit-Info
// header of every answer for the allocation guard, and keyset paging it can resume from a cursor.
import type { Connector } from '../connector';
import { ProviderError } from '../connector';
import { credentialsFlow, SalesforceAuth, SALESFORCE_LOGIN_URL } from './auth';
import { SalesforceHttp } from './http';
import { pullSalesforce } from './pull';
import { pushManyToSalesforce, pushToSalesforce } from './push';
import { parseSalesforceSettings, SalesforceSettingsError } from './settings';

export interface SalesforceConnectorOptions {
  /** Login host used when the credentials name none; default https://login.salesforce.com. */
  loginUrl?: string;
  /** Deadline per request; default 60 s (a 2,000-record batch of a wide object can be slow). */
  timeoutMs?: number;
  /** The clock JWT expiry and pauses are counted from (tests run an org on their own clock). */
  now?: () => Date;
}

export function createSalesforceConnector(options: SalesforceConnectorOptions = {}): Connector {
  const timeoutMs = options.timeoutMs ?? 60_000;
  // One session cache for every pull and push of this process.
  const auth = new SalesforceAuth(options.loginUrl ?? SALESFORCE_LOGIN_URL, timeoutMs, options.now);
  const settingsOf = (raw: Record<string, unknown> | undefined) => {
    try {
      return parseSalesforceSettings(raw ?? {});
    } catch (error) {
      if (error instanceof SalesforceSettingsError) throw new ProviderError(`the connection's Salesforce settings do not fit: ${error.message}`, null, false);
      throw error;
    }
  };

  return {
    provider: 'salesforce',
    pull(ctx) {
      const settings = settingsOf(ctx.settings);
      return pullSalesforce(new SalesforceHttp(auth, ctx.credentials, settings.api_version, ctx.signal, timeoutMs), ctx, settings, options.now);
    },
    push(credentials, request, signal, target, rawSettings) {
      const settings = settingsOf(rawSettings);
      return pushToSalesforce(new SalesforceHttp(auth, credentials, settings.api_version, signal, timeoutMs), request, settings, target);
    },
    pushMany(credentials, items, signal, rawSettings) {
      const settings = settingsOf(rawSettings);
      return pushManyToSalesforce(new SalesforceHttp(auth, credentials, settings.api_version, signal, timeoutMs), items, settings);
    },
    validateCredentials(credentials) {
      const flow = credentialsFlow(credentials);
      if (flow !== 'jwt' && flow !== 'refresh' && flow !== 'session') return flow;
      const allowed = new Set(['client_id', 'username', 'private_key', 'client_secret', 'refresh_token', 'access_token', 'instance_url', 'login_url']);
      const extra = Object.keys(credentials).filter((k) => !allowed.has(k));
      if (extra.length > 0) return `Salesforce credentials do not take ${extra.join(', ')}`;
      for (const key of ['login_url', 'instance_url']) {
        const url = credentials[key];
        if (url !== undefined && !/^https?:\/\/[^\s/]+/.test(url)) return `${key} must be a URL such as https://login.salesforce.com`;
      }
      return null;
    },
    validateSettings(settings) {
      try {
        parseSalesforceSettings(settings);
        return null;
      } catch (error) {
        if (error instanceof SalesforceSettingsError) return error.message;
        throw error;
      }
    },
  };
}
