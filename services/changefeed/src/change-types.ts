// The one list of change types. It is the public `types` vocabulary of GET /changes (a test keeps
// it equal to the OpenAPI enum); the feed consumes each one as soon as its message exists in the
// proto-schemas catalog, so a publisher that lands later needs no change here.
import { isMessageType } from '@sightline/proto-schemas';

export const CHANGE_TYPES = [
  'conversion.created',
  'conversion.updated',
  'conversion.value_changed',
  'stage.changed',
  'deal.created',
  'deal.stage_changed',
  'funnel.created',
  'funnel.updated',
  'funnel.deleted',
  'automation.created',
  'automation.updated',
  'automation.deleted',
  'automation.ran',
] as const;

export type ChangeType = (typeof CHANGE_TYPES)[number];

/** The change types that are bus messages today: what the consumer binds. */
export function consumedChangeTypes(): ChangeType[] {
  return CHANGE_TYPES.filter((type) => isMessageType(type));
}
