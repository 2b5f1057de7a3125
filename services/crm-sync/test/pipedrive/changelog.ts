// The API v1 route for a deal's changelog (GET /api/v1/deals/:id/changelog): the recorded stage,
// pipeline and status changes, newest first, paged by an offset cursor.
import { v1Time } from './json';
import { parseLimit } from './params';
import { PipedriveV2Routes } from './routes-v2';
import { HttpError, USER_ID } from './types';

export class PipedriveChangelog extends PipedriveV2Routes {
  protected changelogPage(dealId: number, q: Record<string, string>): unknown {
    this.visibleDeal(dealId);
    const limit = parseLimit(q['limit']);
    const newestFirst = [...(this.changes.get(dealId) ?? [])].map((c, i) => ({ c, i })).reverse();
    const start = q['cursor'] === undefined ? 0 : Number(Buffer.from(q['cursor'], 'base64url').toString('utf8').replace(/^offset:/, ''));
    if (!Number.isInteger(start) || start < 0) throw new HttpError(400, 'Invalid cursor');
    const page = newestFirst.slice(start, start + limit);
    const more = start + limit < newestFirst.length;
    return {
      success: true,
      data: page.map(({ c }) => ({ field_key: c.field_key, old_value: c.old_value, new_value: c.new_value, actor_user_id: USER_ID, time: v1Time(c.at), change_source: c.source, change_source_user_agent: null, is_bulk_update_flag: false })),
      additional_data: { next_cursor: more ? Buffer.from(`offset:${start + limit}`).toString('base64url') : null },
    };
  }
}
