// The checks of a spec that need other systems: the chat channels must exist in the Slack
// workspace connected to the Sightline workspace, and each gather query must be one the owning
// service answers (run once now, with the current data).
import { ProblemError, isProblemKind } from '@sightline/kit';
import type { Logger } from 'pino';
import type { ChatConnections } from '../chat/chat.repo';
import { DeliveryError } from '../deliver/errors';
import type { SlackApi } from '../deliver/slack';
import type { Gatherer, WebsiteSnapshot, WorkspaceSnapshot } from '../gather/gather';
import type { AutomationSpec } from '../spec/spec';

export interface SpecCheckDeps {
  chat: ChatConnections;
  slack: SlackApi;
  gatherer: Gatherer;
  logger: Logger;
}

export async function checkChatChannels(deps: SpecCheckDeps, spec: AutomationSpec, workspaceId: string): Promise<void> {
  const channels = spec.deliver.filter((d) => d.channel === 'chat').flatMap((d) => d.to);
  if (channels.length === 0) return;
  const token = await deps.chat.token(workspaceId);
  if (token === null) {
    throw new ProblemError('invalid-request', {
      detail: 'deliver names chat channels, but no Slack workspace is connected to this Sightline workspace.',
      remediation: 'Ask the operator to connect one (`sightline automations chat add --workspace <id> --token-file <bot token file>`), or deliver by email.',
    });
  }
  for (const channel of channels) {
    let problem: string | null;
    try {
      problem = await deps.slack.channelProblem(token, channel);
    } catch (error) {
      const message = error instanceof DeliveryError ? error.message : String(error);
      throw new ProblemError('service-unavailable', {
        detail: `The connected Slack workspace could not be asked about channel ${channel} (${message}).`,
        remediation: 'Retry in a minute with the request unchanged.',
        headers: { 'Retry-After': '30' },
      });
    }
    if (problem === 'channel_not_found') {
      throw new ProblemError('invalid-request', {
        detail: `The connected Slack workspace has no channel ${channel} (or the Sightline app cannot see it).`,
        remediation: 'Use the id of a channel of the connected workspace (channel details, at the bottom); for a private channel, invite the Sightline app to it first.',
      });
    }
    if (problem !== null) {
      throw new ProblemError('invalid-request', {
        detail: `The connected Slack workspace refused to describe channel ${channel}: ${problem}.`,
        remediation: problem === 'missing_scope' || problem === 'invalid_auth' || problem === 'token_revoked'
          ? 'Ask the operator to reconnect Slack with a bot token that has the scopes chat:write, channels:read, groups:read and channels:history.'
          : 'Check the channel id, or choose another channel.',
      });
    }
  }
}

/** Runs the gather queries once; a query the owning service refuses is refused here with its kind. */
export async function dryRunGather(deps: SpecCheckDeps, spec: AutomationSpec, workspace: WorkspaceSnapshot, website: WebsiteSnapshot, now: Date): Promise<void> {
  if (!spec.gather) return;
  const { results } = await deps.gatherer.gather([{ key: 'dry-run', workspace, website, gather: spec.gather, previous: [] }], now);
  const result = results.get('dry-run');
  if (!result || result.ok) return;
  const problem = result.problem;
  if (problem?.kind === 'not-found') {
    throw new ProblemError('invalid-request', { detail: `A gather query names a funnel this website does not have (${problem.detail}).`, remediation: 'Use the id of one of the website\'s funnels (GET /funnels).' });
  }
  if (problem && problem.status >= 400 && problem.status < 500 && isProblemKind(problem.kind)) {
    throw new ProblemError(problem.kind, {
      detail: `A gather query cannot be answered: ${problem.detail}`,
      remediation: problem.remediation ?? 'Correct the gather query.',
      ...(problem.allowed ? { allowed: problem.allowed } : {}),
    });
  }
  // The owning service is down or slow: the spec itself was checked, so the alert is kept.
  deps.logger.warn({ error: result.error }, 'automations: gather dry run could not be made; the spec is accepted on its own checks');
}
