// Numbers and times as a message shows them: amounts in the alert's currency, counts with
// grouping, ratios as per cent, instants in the alert's timezone.
import { METRICS, type MetricName } from '@sightline/proto-schemas';
import { DateTime } from 'luxon';

const LOCALE = 'en-US';
const KIND = new Map(METRICS.map((m) => [m.name, m]));

/** Ratios show this many decimals, always (3.0%, not 3%): figures line up and read alike. */
const PERCENT_DIGITS = 1;
const MULTIPLE_DIGITS = 2;

/**
 * An amount rounded to its currency's minor unit, as Intl knows it (JPY 0 decimals, EUR 2, BHD 3);
 * a code Intl refuses is shown after the number, with 2 decimals.
 */
export function formatMoney(value: number, currency: string): string {
  try {
    return new Intl.NumberFormat(LOCALE, { style: 'currency', currency, signDisplay: 'negative' }).format(value);
  } catch {
    return `${formatNumber(value)} ${currency}`;
  }
}

export function formatNumber(value: number, maxFractionDigits = 2): string {
  return new Intl.NumberFormat(LOCALE, { maximumFractionDigits: maxFractionDigits }).format(value);
}

function fixed(value: number, digits: number, signDisplay: 'negative' | 'exceptZero' = 'negative'): string {
  return new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits, signDisplay }).format(value);
}

/** A change in per cent, signed: +20.0%, -19.9%, 0.0%. */
export function formatPercent(value: number): string {
  return `${fixed(value, PERCENT_DIGITS, 'exceptZero')}%`;
}

/** A metric's value: currency metrics as money, fractions as per cent, multiples with an ×. */
export function formatMetric(metric: MetricName | 'funnel_conversion', value: number | null, currency: string): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  if (metric === 'funnel_conversion') return `${fixed(value * 100, PERCENT_DIGITS)}%`;
  const def = KIND.get(metric as MetricName);
  if (def?.kind === 'currency' || def?.unit === 'currency') return formatMoney(value, currency);
  if (def?.unit === 'fraction') return `${fixed(value * 100, PERCENT_DIGITS)}%`;
  if (def?.unit === 'multiple') return `${fixed(value, MULTIPLE_DIGITS)}×`;
  if (def?.kind === 'ratio') return fixed(value, MULTIPLE_DIGITS);
  // Counts: whole numbers as such; attributed (fractional) counts to 2 decimals.
  return formatNumber(value, 2);
}

export function formatInstant(iso: string, timezone: string): string {
  const at = DateTime.fromISO(iso, { zone: timezone });
  return at.isValid ? at.toFormat('ccc d LLL yyyy, HH:mm') : iso;
}

/** A window [from, to) as a reader says it: the last day is the one before `to`. */
export function formatWindow(from: string, to: string, timezone: string): string {
  const start = DateTime.fromISO(from, { zone: timezone });
  const end = DateTime.fromISO(to, { zone: timezone });
  const wholeDays = start.startOf('day').equals(start) && end.startOf('day').equals(end);
  if (wholeDays) {
    const last = end.minus({ days: 1 });
    return last.hasSame(start, 'day') ? start.toFormat('d LLL yyyy') : `${start.toFormat('d LLL yyyy')} – ${last.toFormat('d LLL yyyy')}`;
  }
  return `${start.toFormat('d LLL yyyy HH:mm')} – ${end.toFormat('d LLL yyyy HH:mm')}`;
}
