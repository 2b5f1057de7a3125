// Comparison windows (the one before, or the same one N days earlier) counted in local calendar days
// of the website timezone, so across a daylight-saving change they keep midnight-to-midnight bounds
// instead of drifting by an hour as equal-milliseconds arithmetic would. Rules: ../README.md.
import { DateTime } from 'luxon';

/** Two UTC instants, `to` exclusive; a `ResolvedWindow` fits. */
export interface WindowBounds {
  from: string;
  to: string;
}

/**
 * The window immediately before `window`: it ends where `window` starts and is as long in local
 * time. A window of whole local days (both ends at a local start of day) gives the same number of
 * whole local days before it; any other window gives the one of equal local wall-clock length
 * (a "last 24 hours" across the spring change is then 23 real hours), never one an hour off.
 */
export function previousWindow(window: WindowBounds, timezone: string): WindowBounds {
  const { from, to } = read(window, timezone);
  if (startsADay(from) && startsADay(to)) {
    const days = Math.round(dateOf(to).diff(dateOf(from), 'days').days);
    return { from: iso(shiftDay(from, -days)), to: iso(from) };
  }
  const length = wall(to).toMillis() - wall(from).toMillis();
  return { from: iso(fromWall(wall(from).minus(length), timezone)), to: iso(from) };
}

/**
 * `window` moved by `days` local calendar days (negative is earlier: `-7` is the same window a week
 * before). Each end keeps its local wall-clock time; an end at a local start of day stays at one.
 */
export function shiftWindowDays(window: WindowBounds, days: number, timezone: string): WindowBounds {
  if (!Number.isInteger(days)) throw new RangeError(`shiftWindowDays: days must be a whole number, got ${days}`);
  const { from, to } = read(window, timezone);
  const move = (dt: DateTime) => (startsADay(dt) ? shiftDay(dt, days) : dt.plus({ days }));
  return { from: iso(move(from)), to: iso(move(to)) };
}

/** Bad instants or timezone are the caller's bug (windows come from resolveWindow), so RangeError. */
function read(window: WindowBounds, timezone: string): { from: DateTime; to: DateTime } {
  const from = DateTime.fromISO(window.from, { zone: timezone });
  const to = DateTime.fromISO(window.to, { zone: timezone });
  for (const dt of [from, to]) {
    if (!dt.isValid) throw new RangeError(`comparison window: ${dt.invalidExplanation ?? 'invalid'} (${JSON.stringify(window)}, timezone ${JSON.stringify(timezone)})`);
  }
  if (from >= to) throw new RangeError(`comparison window: from must be before to (${JSON.stringify(window)})`);
  return { from, to };
}

// Where local midnight does not exist the day starts at the first local time that does (as in
// resolveWindow), so "starts a day" is compared with startOf('day'), not with 00:00.
const startsADay = (dt: DateTime) => dt.toMillis() === dt.startOf('day').toMillis();
const dateOf = (dt: DateTime) => DateTime.fromISO(dt.toISODate() ?? '', { zone: 'utc' });
const shiftDay = (dt: DateTime, days: number) => dt.plus({ days }).startOf('day');

/** Local wall-clock time as if it were UTC, so differences ignore offset changes. */
const wall = (dt: DateTime) => DateTime.fromObject(dt.toObject(), { zone: 'utc' });
const fromWall = (w: DateTime, timezone: string) => {
  const { year, month, day, hour, minute, second, millisecond } = w.toObject();
  return DateTime.fromObject({ year, month, day, hour, minute, second, millisecond }, { zone: timezone });
};

function iso(dt: DateTime): string {
  return dt.toUTC().toJSDate().toISOString();
}
