// Slack's Web API through its official client (@slack/web-api): auth.test when a workspace is
// connected, conversations.info to check a channel when an alert names it, chat.postMessage to
// deliver, and conversations.history to learn whether an attempt cut short by a crash got through.
// Retries are ours (the durable queue), so the client's own are off and a 429 comes back at once
// with its Retry-After.
import { LogLevel, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient } from '@slack/web-api';
import { DeliveryError, errorCode } from './errors';

/** Marks our messages (message metadata) so a later look at the channel can find one by delivery id. */
export const METADATA_EVENT_TYPE = 'sightline_alert';

/** Errors that retrying cannot fix (Slack's documented chat.postMessage errors). */
const PERMANENT = new Set([
  'channel_not_found', 'not_in_channel', 'is_archived', 'invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired',
  'missing_scope', 'no_permission', 'msg_too_long', 'no_text', 'restricted_action', 'team_access_not_granted', 'invalid_arguments', 'ekm_access_denied',
]);

export interface SlackApi {
  authTest(token: string): Promise<{ teamId: string; team: string }>;
  /** null when the channel exists; else Slack's error (channel_not_found, ...). */
  channelProblem(token: string, channel: string): Promise<string | null>;
  post(token: string, channel: string, text: string, deliveryId: string): Promise<string>;
  /** The ts of our message for this delivery posted since `since`, or null when there is none. */
  findPosted(token: string, channel: string, deliveryId: string, since: Date): Promise<string | null>;
}

export function createSlackApi(options: { baseUrl: string; timeoutMs: number }): SlackApi {
  const clients = new Map<string, WebClient>();
  const client = (token: string): WebClient => {
    let c = clients.get(token);
    if (!c) {
      c = new WebClient(token, {
        slackApiUrl: `${options.baseUrl.replace(/\/$/, '')}/`,
        timeout: options.timeoutMs,
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 0 },
        allowAbsoluteUrls: false,
        // Failures are ours to report (on the delivery), not the client's to print.
        logLevel: LogLevel.ERROR,
      });
      if (clients.size > 100) clients.clear();
      clients.set(token, c);
    }
    return c;
  };
  return {
    async authTest(token) {
      try {
        const r = await client(token).auth.test();
        return { teamId: String(r.team_id ?? ''), team: String(r.team ?? '') };
      } catch (error) {
        throw classifySlackError(error);
      }
    },
    async channelProblem(token, channel) {
      try {
        await client(token).conversations.info({ channel });
        return null;
      } catch (error) {
        if (error instanceof WebAPIPlatformError) return error.data.error;
        throw classifySlackError(error);
      }
    },
    async post(token, channel, text, deliveryId) {
      try {
        const r = await client(token).chat.postMessage({
          channel,
          text,
          mrkdwn: true,
          unfurl_links: false,
          unfurl_media: false,
          metadata: { event_type: METADATA_EVENT_TYPE, event_payload: { delivery_id: deliveryId } },
        });
        return String(r.ts ?? '');
      } catch (error) {
        throw classifySlackError(error);
      }
    },
    async findPosted(token, channel, deliveryId, since) {
      try {
        let cursor: string | undefined;
        for (let page = 0; page < 10; page += 1) {
          const r = await client(token).conversations.history({
            channel, oldest: (since.getTime() / 1000).toFixed(6), include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}),
          });
          for (const m of r.messages ?? []) {
            const meta = (m as { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }).metadata;
            if (meta?.event_type === METADATA_EVENT_TYPE && meta.event_payload?.['delivery_id'] === deliveryId) return String(m.ts ?? '');
          }
          cursor = r.response_metadata?.next_cursor || undefined;
          if (!r.has_more || !cursor) break;
        }
        return null;
      } catch (error) {
        throw classifySlackError(error);
      }
    },
  };
}

/** Keys see Slack's error code or HTTP status only; a request's own failure text (hosts, ports) is the detail. */
export function classifySlackError(error: unknown): DeliveryError {
  if (error instanceof DeliveryError) return error;
  if (error instanceof WebAPIRateLimitedError) return new DeliveryError(`Slack answered ratelimited (retry after ${error.retryAfter} s)`, true, error.retryAfter * 1000);
  if (error instanceof WebAPIPlatformError) {
    const code = String(error.data.error);
    const shown = /^[a-z0-9_]{1,60}$/.test(code) ? code : 'an error';
    return new DeliveryError(`Slack answered ${shown}`, !PERMANENT.has(code), null, code);
  }
  if (error instanceof WebAPIHTTPError) return new DeliveryError(`Slack answered HTTP ${error.statusCode}`, error.statusCode >= 500 || error.statusCode === 408, null, error.statusMessage);
  if (error instanceof WebAPIRequestError) {
    const code = errorCode((error.original as { code?: unknown }).code);
    return new DeliveryError(`Slack could not be reached${code ? ` (${code})` : ''}`, true, null, error.original.message);
  }
  return new DeliveryError('Slack could not be reached', true, null, error instanceof Error ? error.message : String(error));
}
