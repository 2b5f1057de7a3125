import { ProblemError } from './errors';
import { CursorCodec } from './cursor';

describe('cursors', () => {
  const codec = new CursorCodec('a-secret-of-sufficient-length');
  it('round-trips a position within its scope', () => {
    const cursor = codec.encode('contacts:w1:status=won', { t: '2026-01-01T00:00:00Z', id: 'x' });
    expect(codec.decode('contacts:w1:status=won', cursor)).toEqual({ t: '2026-01-01T00:00:00Z', id: 'x' });
  });
  it('refuses an edited cursor, another scope, or another secret, as invalid-request', () => {
    const cursor = codec.encode('s', { n: 1 });
    const edited = `${Buffer.from(JSON.stringify({ s: 's', p: { n: 2 } })).toString('base64url')}.${cursor.split('.')[1]}`;
    for (const attempt of [() => codec.decode('s', edited), () => codec.decode('other', cursor), () => new CursorCodec('another-secret-entirely').decode('s', cursor), () => codec.decode('s', 'garbage')]) {
      expect(attempt).toThrow(ProblemError);
      try {
        attempt();
      } catch (error) {
        expect((error as ProblemError).kind).toBe('invalid-request');
        expect((error as ProblemError).remediation).toMatch(/Restart paging/);
      }
    }
  });
});
