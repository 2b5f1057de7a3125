// The change types: the public `types` vocabulary of GET /changes (proto-schemas' registry, which
// the OpenAPI enum is built from) and exactly the message types the catalog says the feed consumes.
// The two checks below fail tsc if they drift apart.
import { CHANGE_TYPES, type ConsumedBy } from '@sightline/proto-schemas';

export { CHANGE_TYPES };
export type ChangeType = (typeof CHANGE_TYPES)[number];

type NotConsumed = Exclude<ChangeType, ConsumedBy<'changefeed'>>;
type NotAChangeType = Exclude<ConsumedBy<'changefeed'>, ChangeType>;
export const CHANGE_TYPES_ARE_THE_CONSUMED_TYPES: [NotConsumed | NotAChangeType] extends [never] ? true : NotConsumed | NotAChangeType = true;
