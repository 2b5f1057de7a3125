// Versions of derived rows: the time a computation started reading its facts, in microseconds,
// strictly increasing within a process. A fact stored before a computation started is seen by it,
// so of all the rows computed for one key, the newest version saw every fact stored before it
// started; reads take that one (FINAL). Across processes the wall clock orders them.

let last = 0;

/** The next version: microseconds since the epoch, never repeated in this process. */
export function nextVersion(): number {
  last = Math.max(Date.now() * 1000, last + 1);
  return last;
}

/** A version as DateTime64(6) text ('YYYY-MM-DD hh:mm:ss.ffffff', UTC), for inserts and query parameters. */
export function versionText(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = String(micros % 1_000_000).padStart(6, '0');
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')}.${fraction}`;
}
