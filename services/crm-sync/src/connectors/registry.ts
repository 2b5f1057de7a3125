// Provider name → connector. A provider is one entry here; its base URL comes from the module
// options (providerUrls), so tests and proxies point it elsewhere without the connector knowing.
import type { CrmSyncOptions } from '../deps';
import type { Connector } from './connector';
import { createHubspotConnector } from './hubspot/hubspot.connector';
import { createPipedriveConnector } from './pipedrive/pipedrive.connector';
import { createSalesforceConnector } from './salesforce/salesforce.connector';

const FACTORIES: Record<string, (options: CrmSyncOptions) => Connector> = {
  hubspot: (options) => createHubspotConnector({ ...(options.providerUrls?.['hubspot'] ? { baseUrl: options.providerUrls['hubspot'] } : {}) }),
  // The URL given is Salesforce's login host; the API host is the instance_url the login answers.
  salesforce: (options) => createSalesforceConnector({ ...(options.providerUrls?.['salesforce'] ? { loginUrl: options.providerUrls['salesforce'] } : {}) }),
  // API-token connections use this base URL; OAuth ones the api_domain of their credentials.
  pipedrive: (options) => createPipedriveConnector({ ...(options.providerUrls?.['pipedrive'] ? { baseUrl: options.providerUrls['pipedrive'] } : {}) }),
};

export const PROVIDERS: readonly string[] = Object.keys(FACTORIES);

// One connector per options object, so rate-limit state is shared by everything that calls it.
const made = new WeakMap<CrmSyncOptions, Map<string, Connector>>();

export function connectorFor(provider: string, options: CrmSyncOptions): Connector | null {
  const factory = FACTORIES[provider];
  if (!factory) return null;
  let byProvider = made.get(options);
  if (!byProvider) {
    byProvider = new Map();
    made.set(options, byProvider);
  }
  let connector = byProvider.get(provider);
  if (!connector) {
    connector = factory(options);
    byProvider.set(provider, connector);
  }
  return connector;
}
