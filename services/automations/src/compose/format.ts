// Numbers and times as a message shows them: amounts in the alert's currency, counts with
// grouping, ratios as per cent, instants in the alert's timezone.
import { METRICS, type MetricName } from '@sightline/proto-schemas';
import { DateTime } from 'luxon';

const LOCALE = 'en-US';
const KIND = new Map(METRICS.map((m) => [m.name, m]));

export function formatMoney(value: number, currency: string): string {
  try {
    return new Intl.NumberFormat(LOCALE, { style: 'currency', currency }).format(value);
  } catch {
    return `${formatNumber(value)} ${currency}`;
  }
}

export function formatNumber(value: number, maxFractionDigits = 2): string {
  return new Intl.NumberFormat(LOCALE, { maximumFractionDigits: maxFractionDigits }).format(value);
}

export function formatPercent(value: number): string {
  return `${value > 0 ? '+' : ''}${formatNumber(value, 1)}%`;
}

/** A metric's value: currency metrics as money, fractions as per cent, multiples with an ×. */
export function formatMetric(metric: MetricName | 'funnel_conversion', value: number | null, currency: string): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  if (metric === 'funnel_conversion') return `${formatNumber(value * 100, 1)}%`;
  const def = KIND.get(metric as MetricName);
  if (def?.kind === 'currency' || def?.unit === 'currency') return formatMoney(value, currency);
  if (def?.unit === 'fraction') return `${formatNumber(value * 100, 1)}%`;
  if (def?.unit === 'multiple') return `${formatNumber(value, 2)}×`;
  return formatNumber(value, def?.kind === 'ratio' ? 2 : 2);
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
