// Which milestone stages a workspace uses, to refuse a misspelt `stages` value instead of
// answering an empty list. The pipelines themselves live in crm-sync; attribution knows the stages
// its milestones were recorded under, plus the standard stage keys every workspace may ask for.
import { ProblemError, type ClickHouseStore } from '@sightline/kit';
import { EXAMPLE_STAGES } from '@sightline/proto-schemas';

export async function stageVocabulary(ch: ClickHouseStore, workspaceId: string): Promise<string[]> {
  const rows = await ch.query<{ stage: string }>(
    'SELECT DISTINCT toString(stage) AS stage FROM milestones WHERE workspace_id = {workspace:UUID}',
    { workspace: workspaceId },
  );
  return [...new Set([...EXAMPLE_STAGES, ...rows.map((r) => r.stage)])].sort();
}

/** Throws invalid-request listing the vocabulary when a stage is not in it. */
export async function assertKnownStages(ch: ClickHouseStore, workspaceId: string, stages: readonly string[]): Promise<void> {
  const vocabulary = await stageVocabulary(ch, workspaceId);
  const unknown = stages.filter((s) => !vocabulary.includes(s));
  if (unknown.length === 0) return;
  throw new ProblemError('invalid-request', {
    detail: `Unknown stage ${unknown.map((s) => `'${s}'`).join(', ')} for this workspace.`,
    remediation: 'Use stage keys the workspace records (see `allowed`, or GET /pipelines).',
    allowed: vocabulary,
  });
}
