// Who alert email may go to. Alerts send through the operator's SMTP server to addresses nobody
// verified, so:
// - an address at an IP literal (user@[10.0.0.1], user@127.0.0.1, user@127.1) is always refused:
//   it names a host, not a mail domain, and could aim the server at internal machines;
// - when the operator sets an allow-list of domains (SIGHTLINE_ALERT_EMAIL_DOMAINS), an address
//   must be at one of them or a subdomain of one. Unset, any domain is accepted (the per-workspace
//   send budget still bounds the volume).
// Checked when an alert is written (spec/validate.ts) and again before each email is sent, for
// alerts written before the operator narrowed the list.
import { ProblemError } from '@sightline/kit';

/** Why an address may not receive alert email, or null when it may. */
export function recipientFault(address: string, allowedDomains: readonly string[] | null | undefined): 'ip-literal' | 'domain' | null {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1).trim().toLowerCase().replace(/\.$/, '');
  if (domain.startsWith('[') || isIpAddress(domain)) return 'ip-literal';
  if (allowedDomains && allowedDomains.length > 0 && !allowedDomains.some((d) => domain === d || domain.endsWith(`.${d}`))) return 'domain';
  return null;
}

/** A domain whose last label is a number (decimal or hex) is an IPv4 address in one of its forms; a colon, IPv6. */
function isIpAddress(domain: string): boolean {
  const last = domain.split('.').pop() ?? '';
  return domain.includes(':') || /^(\d+|0x[0-9a-f]*)$/i.test(last);
}

/** Refuses an email recipient of deliver[index] the operator does not allow (400, with `allowed` for the domain list). */
export function checkEmailRecipient(address: string, index: number, allowedDomains: readonly string[] | null | undefined): void {
  const fault = recipientFault(address, allowedDomains);
  if (fault === 'ip-literal') {
    throw new ProblemError('invalid-request', {
      detail: `deliver[${index}]: ${JSON.stringify(address)} is at an IP address; alert email goes to mail domains only.`,
      remediation: 'Give the address at its mail domain, e.g. name@example.com.',
    });
  }
  if (fault === 'domain') {
    throw new ProblemError('invalid-request', {
      detail: `deliver[${index}]: ${JSON.stringify(address)} is not at a domain this Sightline sends alert email to.`,
      remediation: 'Use an address at one of the allowed domains (or a subdomain of one), or ask the operator to add the domain to SIGHTLINE_ALERT_EMAIL_DOMAINS.',
      allowed: [...(allowedDomains ?? [])],
    });
  }
}

/** The operator's list as configured: lower-case, without leading "@" or dots; null when unset or empty. */
export function normaliseDomains(domains: readonly string[] | undefined): string[] | null {
  const list = (domains ?? []).map((d) => d.trim().toLowerCase().replace(/^[@.]+/, '').replace(/\.$/, '')).filter((d) => d !== '');
  return list.length > 0 ? [...new Set(list)] : null;
}
