// Cron times in the alert's timezone (croner). A cron is 5 fields, or 6 with seconds first.
import { Cron } from 'croner';

export interface CronCheck {
  ok: boolean;
  reason?: string;
}

function parse(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true, mode: expression.trim().split(/\s+/).length === 6 ? '6-part' : '5-part' });
}

/** Whether the expression parses and fires at least once from `now`. */
export function checkCron(expression: string, timezone: string, now: Date): CronCheck {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { ok: false, reason: `a cron has 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; this one has ${fields}` };
  let cron: Cron;
  try {
    cron = parse(expression, timezone);
  } catch (error) {
    return { ok: false, reason: `it does not parse: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (cron.nextRun(now) === null) return { ok: false, reason: 'it never fires (no date matches it)' };
  return { ok: true };
}

/** The first cron time strictly after `after`, or null when there is none. */
export function nextRunAfter(expression: string, timezone: string, after: Date): Date | null {
  return parse(expression, timezone).nextRun(after);
}
