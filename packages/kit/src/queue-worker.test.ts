// The queue loop on its own, over an array standing for the table: batches until one comes back
// short, a call mid-round asks for one more pass, a failing row does not stop the others, and a
// stopping worker gives back what it claimed but did not work.
import { createQueueWorker, type QueueWorkerOptions } from './queue-worker';

function queueOf(ids: number[]) {
  const due = [...ids];
  const worked: number[] = [];
  const released: number[] = [];
  const errors: (number | null)[] = [];
  const options = (more: Partial<QueueWorkerOptions<number>> = {}): QueueWorkerOptions<number> => ({
    claim: async (_now, _until, limit) => due.splice(0, limit),
    work: async (row) => void worked.push(row),
    release: async (row) => void released.push(row),
    onError: (_error, row) => void errors.push(row),
    now: () => new Date(0),
    leaseMs: 1000,
    batchSize: 2,
    ...more,
  });
  return { due, worked, released, errors, options };
}

describe('createQueueWorker', () => {
  it('claims batch after batch until one comes back short, in claim order', async () => {
    const q = queueOf([1, 2, 3, 4, 5]);
    await expect(createQueueWorker(q.options()).runDue()).resolves.toBe(5);
    expect(q.worked).toEqual([1, 2, 3, 4, 5]);
  });

  it('stops after a full batch followed by an empty one (exactly batchSize rows due)', async () => {
    const q = queueOf([1, 2]);
    const claims: number[] = [];
    const worker = createQueueWorker(q.options({ claim: async (_n, _u, limit) => { const rows = q.due.splice(0, limit); claims.push(rows.length); return rows; } }));
    await expect(worker.runDue()).resolves.toBe(2);
    expect(claims).toEqual([2, 0]);
  });

  it('joins a call made mid-round and makes one more pass for rows queued meanwhile', async () => {
    const q = queueOf([1]);
    let worker: ReturnType<typeof createQueueWorker> | null = null;
    let joined: Promise<number> | null = null;
    worker = createQueueWorker(q.options({
      work: async (row) => {
        q.worked.push(row);
        if (row === 1) {
          q.due.push(2); // queued while the round runs, after its short batch was claimed
          joined = worker?.runDue() ?? null;
        }
      },
    }));
    const first = worker.runDue();
    await expect(first).resolves.toBe(2);
    await expect(joined).resolves.toBe(2);
    expect(q.worked).toEqual([1, 2]);
  });

  it('reports a failing row and goes on with the rest', async () => {
    const q = queueOf([1, 2, 3]);
    const worker = createQueueWorker(q.options({ work: async (row) => { if (row === 2) throw new Error('boom'); q.worked.push(row); } }));
    await expect(worker.runDue()).resolves.toBe(3);
    expect(q.worked).toEqual([1, 3]);
    expect(q.errors).toEqual([2]);
  });

  it('works up to `concurrency` rows at once', async () => {
    const q = queueOf([1, 2, 3, 4]);
    let running = 0;
    let most = 0;
    const worker = createQueueWorker(q.options({
      batchSize: 4,
      concurrency: 3,
      work: async (row) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
        q.worked.push(row);
      },
    }));
    await worker.runDue();
    expect(most).toBe(3);
    expect(q.worked.sort()).toEqual([1, 2, 3, 4]);
  });

  it('gives back claimed rows it has not worked when stopped, and claims no more', async () => {
    const q = queueOf([1, 2, 3, 4, 5]);
    let stopping: Promise<void> | null = null;
    const worker = createQueueWorker(q.options({
      batchSize: 3,
      work: async (row) => {
        q.worked.push(row);
        if (row === 1) stopping = worker.stop();
      },
    }));
    await worker.runDue();
    await stopping;
    expect(q.worked).toEqual([1]);
    expect(q.released).toEqual([2, 3]);
    expect(q.due).toEqual([4, 5]);
  });

  it('hands each claimed batch to workBatch whole, and a failing batch to onError without stopping the round', async () => {
    const q = queueOf([1, 2, 3, 4, 5]);
    const batches: number[][] = [];
    const worker = createQueueWorker(q.options({
      workBatch: async (rows) => {
        batches.push(rows);
        if (rows.includes(3)) throw new Error('provider down');
      },
    }));
    await expect(worker.runDue()).resolves.toBe(5);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(q.worked).toEqual([]);
    expect(q.errors).toEqual([null]);
  });
});
