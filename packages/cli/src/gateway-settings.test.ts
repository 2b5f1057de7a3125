// The gateway's section of the configuration: SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND reaches the module's
// options (issue 24), and a bad value stops the start naming the variable.
import { loadConfig, sectionOf } from '@sightline/kit';
import { GATEWAY_SETTINGS, SETTINGS_SECTIONS } from './settings';

const gatewayOptions = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), GATEWAY_SETTINGS);

describe('gateway settings', () => {
  it('refuses unbound identify signatures unless SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND=true', () => {
    expect(gatewayOptions({})).toEqual({});
    expect(gatewayOptions({ SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND: 'false' })).toEqual({});
    expect(gatewayOptions({ SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND: 'true' })).toEqual({ identifyAcceptUnbound: true });
    expect(() => gatewayOptions({ SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND: 'yes' })).toThrow(/SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND/);
  });
});
