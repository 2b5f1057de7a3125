// The rebuild command's progress lines (the command itself runs end to end in
// test-e2e/contacts-attribution.suite.ts against a running instance).
import { rebuildLine, type RebuildJob } from './attribution-command';

const job: RebuildJob = {
  id: '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f', website_id: '9b2f0c1d-1e2f-4a3b-8c4d-5e6f7a8b9c0d', workspace_id: '1b2f0c1d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  status: 'running', phase: 'journeys', done: 250, total: 1000, seconds: 12.4, sessions: null, outcomes: null, published: null, error: null,
};

describe('sightline attribution rebuild', () => {
  it('reports progress, the time it took, and a failure', () => {
    expect(rebuildLine(job)).toBe('outcomes: 250/1000 (25%), 12 s');
    expect(rebuildLine({ ...job, phase: 'traffic', done: 0, total: 0 })).toBe('sessions: 0/0 (0%), 12 s');
    expect(rebuildLine({ ...job, status: 'done', sessions: 2_000, outcomes: 1_000, published: 3, seconds: 41.25 }))
      .toBe('rebuilt in 41.3 s: 2000 sessions, 1000 outcomes, 3 conversion.attributed published');
    expect(rebuildLine({ ...job, status: 'failed', error: 'chDB cannot open the data directory' })).toBe('rebuild failed after 12.4 s: chDB cannot open the data directory');
  });
});
