// Keeping the CRM on the newest state when write-backs of one contact pile up (the CRM was down,
// a retry is scheduled) and a newer request arrives:
//   - the newer one will be written: it takes the older ones over (their changed fields it lacks
//     are merged in, valued as the contact stands now) and they are skipped as superseded;
//   - the newer one will not be written (it came from the CRM, or the CRM already holds it): the
//     older ones lose the fields it set, since writing them would undo a newer value, and carry the
//     newer contact state; one left with no change is skipped.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';

type Request = OutcomeWritebackRequestedV1;
type Change = Request['changes'][number];

const currentValue = (request: Request, change: Change): Change['new_value'] =>
  change.field in request.current ? request.current[change.field as keyof Request['current']] : change.new_value;

export function mergeOlderChanges(newer: Request, older: Request[]): Request {
  const fields = new Set(newer.changes.map((c) => c.field));
  const merged: Change[] = [...newer.changes];
  for (const request of older) {
    for (const change of request.changes) {
      if (fields.has(change.field)) continue;
      fields.add(change.field);
      merged.push({ field: change.field, old_value: change.old_value, new_value: currentValue(newer, change) });
    }
  }
  return { ...newer, changes: merged };
}

/** The waiting request without the fields the newer one set; null when nothing is left to write. */
export function trimByNewer(waiting: Request, newer: Request): Request | null {
  const taken = new Set(newer.changes.map((c) => c.field));
  const changes = waiting.changes.filter((c) => !taken.has(c.field)).map((c) => ({ ...c, new_value: currentValue(newer, c) }));
  return changes.length === 0 ? null : { ...waiting, changes, current: newer.current };
}
