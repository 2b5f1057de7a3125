// conversion.attributed: each conversion's first and last touch, published when a computation finds
// them different from what was last published (attributed_published), then recorded. Publishing
// comes before recording, so a failure in between republishes on the next computation; the
// message id derives from the content, so that republish carries the same id.
import { createHash } from 'node:crypto';
import type { ClickHouseStore } from '@sightline/kit';
import type { AttributedTouchV1, ConversionAttributedV1 } from '@sightline/proto-schemas';
import type { ComputedJourney, JourneyTouch, WebsiteRef } from './journeys.repo';

/** Publishes conversion.attributed messages (the module's bus; a test's recorder). */
export type AttributedPublisher = (messages: readonly AttributedMessage[]) => Promise<void>;

export interface AttributedMessage {
  id: string;
  payload: ConversionAttributedV1;
}

/** Messages per publish call. */
const PUBLISH_BATCH = 500;

const orNull = (value: string): string | null => (value === '' ? null : value);

function touchOf(t: JourneyTouch | null): AttributedTouchV1 | null {
  if (!t) return null;
  return { occurred_at: new Date(t.started_ms).toISOString(), channel: t.channel, source: orNull(t.source), medium: orNull(t.medium), campaign: orNull(t.campaign) };
}

/** A UUID derived from text (name-based, version 5 layout over SHA-256). */
function derivedId(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16).padStart(2, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

export class AttributedRepo {
  constructor(private readonly ch: ClickHouseStore, private readonly publish: AttributedPublisher) {}

  /** Publishes the computed first/last touches that differ from the published ones; returns how many. */
  async publishChanged(site: WebsiteRef, computed: readonly ComputedJourney[], token: string): Promise<number> {
    if (computed.length === 0) return 0;
    const ids = computed.map((c) => c.conversion_id);
    const published = new Map<string, string>();
    // Output names differ from the column names: an alias named like a column would shadow it.
    const rows = await this.ch.query<{ conversion_id: string; last_state: string; last_count: number }>(
      `SELECT conversion_id, argMax(state, touch_count) AS last_state, max(touch_count) AS last_count
         FROM attributed_published WHERE website_id = {website:UUID} AND conversion_id IN {ids:Array(String)}
        GROUP BY conversion_id`,
      { website: site.websiteId, ids },
    );
    for (const r of rows) published.set(r.conversion_id, `${Number(r.last_count)}|${r.last_state}`);

    const changed: { message: AttributedMessage; state: string }[] = [];
    for (const c of computed) {
      const first = touchOf(c.first);
      const last = touchOf(c.last);
      const state = JSON.stringify([first, last]);
      // Nothing published yet reads as no touch at all: an unattributed conversion sends nothing.
      const before = published.get(c.conversion_id) ?? '0|[null,null]';
      if (before === `${c.touches}|${state}`) continue;
      const payload: ConversionAttributedV1 = {
        conversion_id: c.conversion_id, website_id: site.websiteId, workspace_id: site.workspaceId, first_touch: first, last_touch: last, touch_count: c.touches,
      };
      changed.push({ message: { id: derivedId(`conversion.attributed|${c.conversion_id}|${c.touches}|${state}`), payload }, state });
    }
    for (let i = 0; i < changed.length; i += PUBLISH_BATCH) {
      const part = changed.slice(i, i + PUBLISH_BATCH);
      await this.publish(part.map((c) => c.message));
      await this.ch.insert(
        'attributed_published',
        part.map((c) => ({ website_id: site.websiteId, conversion_id: c.message.payload.conversion_id, touch_count: c.message.payload.touch_count, state: c.state })),
        { dedupToken: `${token}:published:${i}` },
      );
    }
    return changed.length;
  }
}
