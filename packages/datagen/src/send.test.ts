import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateWorkspace } from './generate';
import { sendWorkspace } from './send';

// A throwaway HTTP server standing in for the ingestion endpoints: it records what arrives and
// answers like the API, refusing the first events request once with 429 to exercise the retry.
interface Received { path: string; headers: IncomingMessage['headers']; body: string }

async function startServer(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  let refused = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.url === '/v1/events' && !refused) {
        refused = true;
        res.writeHead(429, { 'Retry-After': '0' }).end('{}');
        return;
      }
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/v1/events') {
        const n = (JSON.parse(body) as { events: unknown[] }).events.length;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ accepted: n, rejected: 0, errors: [] }));
      } else {
        res.writeHead(202).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

describe('sendWorkspace', () => {
  it('posts every batch to the public endpoints with the right headers', async () => {
    const { server, url, received } = await startServer();
    try {
      const ws = generateWorkspace({ seed: 5, days: 5, visitors: 150, domain: 'shop.acme.io', endDate: new Date('2025-06-01T00:00:00Z') });
      const progress: number[] = [];
      const result = await sendWorkspace(ws, { baseUrl: url, apiKey: 'sk_test', concurrency: 4, progressEvery: 50, onProgress: (f) => progress.push(f) });
      const summary = ws.summary();
      expect(result.failed).toBe(0);
      expect(result.collectRequests).toBe(summary.collectBatches);
      expect(result.eventsRequests).toBe(summary.eventsBatches);
      expect(result.accepted).toBe(summary.serverEvents);
      expect(received.length).toBe(summary.collectBatches + summary.eventsBatches);
      const hit = received.find((r) => r.path === '/collect')!;
      expect(hit.headers['content-type']).toBe('text/plain');
      expect(hit.headers['origin']).toBe('https://shop.acme.io');
      expect(hit.headers['x-forwarded-for']).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(hit.headers['user-agent']).toMatch(/^Mozilla/);
      // Seeded browsing is history: a replay the key vouches for (the gateway times key-less hits itself).
      expect(hit.headers['authorization']).toBe('Bearer sk_test');
      const events = received.filter((r) => r.path === '/v1/events');
      expect(events.length).toBeGreaterThan(0);
      expect(events[0]!.headers['authorization']).toBe('Bearer sk_test');
      expect(events[0]!.headers['idempotency-key']).toMatch(/^datagen-shop\.acme\.io-5-\d+$/);
      expect(progress[progress.length - 1]).toBe(1);
    } finally {
      server.close();
    }
  });

  it('reports requests that keep failing', async () => {
    const server = createServer((_req, res) => res.writeHead(400).end('bad'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const ws = generateWorkspace({ seed: 5, days: 1, visitors: 5, domain: 'shop.acme.io', endDate: new Date('2025-06-01T00:00:00Z') });
      const result = await sendWorkspace(ws, { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k' });
      expect(result.failed).toBe(result.collectRequests + result.eventsRequests);
      expect(result.failures[0]).toMatch(/400/);
    } finally {
      server.close();
    }
  });

  it('hands events batches to sendEvents when given, counting what it reports and what it fails', async () => {
    const { server, url, received } = await startServer();
    try {
      const ws = generateWorkspace({ seed: 5, days: 5, visitors: 150, domain: 'shop.acme.io', endDate: new Date('2025-06-01T00:00:00Z') });
      const keys: string[] = [];
      let calls = 0;
      const result = await sendWorkspace(ws, {
        baseUrl: url,
        apiKey: 'k',
        sendEvents: async (body, idempotencyKey) => {
          keys.push(idempotencyKey);
          // The first batch fails for good (the sender retried already); the rest are accepted.
          if (++calls === 1) throw new Error('events 503: service-unavailable');
          return { accepted: body.events.length, rejected: 0 };
        },
      });
      expect(result.eventsRequests).toBe(ws.summary().eventsBatches);
      expect(result.eventsRequests).toBeGreaterThan(1);
      expect(calls).toBe(result.eventsRequests);
      expect(received.filter((r) => r.path === '/v1/events')).toEqual([]);
      expect(result.failed).toBe(1);
      expect(result.failures).toEqual(['events request failed: events 503: service-unavailable']);
      expect(result.accepted).toBeGreaterThan(0);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys.every((k) => k.startsWith('datagen-shop.acme.io-5-'))).toBe(true);
    } finally {
      server.close();
    }
  });
});
