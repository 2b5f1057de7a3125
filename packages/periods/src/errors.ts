// The two problems a window can raise. Remediations list what is accepted, so a client can fix
// the request without reading the docs.
import { ProblemError } from '@sightline/kit';

export const ACCEPTED_FORMS =
  'period accepts: "today", "yesterday"; "this week", "this month", "this quarter", "this year" (to date); ' +
  '"last week", "last month", "last quarter", "last year" (the previous whole unit); ' +
  '"last N days" (N whole days before today, e.g. "last 30 days"; also weeks, months, quarters, years); ' +
  'a weekday ("monday", "last friday"); a month ("March 2026", "2026-03"); a year ("2025"); a date ("2026-03-04"); ' +
  'a range "<start>..<end>" of those or of ISO date-times ("2026-03-01..2026-03-31", both days included; ' +
  '"2026-03-01T08:00:00Z..2026-03-01T20:00:00Z"). Days are in the website timezone. ' +
  'Or give from/to as ISO 8601 date-times ("2026-03-01T00:00:00Z"; to is exclusive), from before to.';

export function invalidWindow(detail: string): ProblemError {
  return new ProblemError('invalid-window', { detail, remediation: ACCEPTED_FORMS });
}

export function windowTooLarge(days: number, maxDays: number): ProblemError {
  return new ProblemError('window-too-large', {
    detail: `The window spans ${formatDays(days)} days; at most ${maxDays} days can be scanned at once.`,
    remediation: `Narrow the period to at most ${maxDays} days, or split it into consecutive windows of at most ${maxDays} days and query each.`,
    extra: { max_days: maxDays },
  });
}

function formatDays(days: number): string {
  return Number.isInteger(days) ? String(days) : days.toFixed(2);
}
