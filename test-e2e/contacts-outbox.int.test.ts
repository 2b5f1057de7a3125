// A PATCH survives a RabbitMQ outage between the ledger write and the change event: the write and
// its messages commit together in the outbox, the relay is held (admin pause) until the broker is
// gone, keeps retrying while it is down, and once RabbitMQ is back every change is delivered
// exactly once to a stand-in `changefeed` on the bus, which has reconnected by itself.
// Gateway, contacts and the stand-in run in one process on PostgreSQL, Redis and RabbitMQ. The
// outage is made with a TCP proxy between this process and the broker: to the process the broker
// goes away (connections dropped, new ones refused) and comes back, while tests running beside
// this one on the same shared broker are not disturbed (a real `rabbitmqctl stop_app` would be).
import { randomUUID } from 'node:crypto';
import { defineStandIn, type Envelope, type RunningProcess } from '@sightline/kit';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startTcpProxy, type TcpProxy } from '@sightline/kit/testing/tcp-proxy';
import { MESSAGE_EXAMPLES, type ConversionCreatedV1 } from '@sightline/proto-schemas';
import { startStack, type Stack } from './stack';

const SERVICES = ['gateway', 'contacts', 'changefeed'];

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('contacts outbox across a RabbitMQ outage', () => {
  let proc: RunningProcess;
  let cleanup: (() => Promise<void>) | undefined;
  let stack: Stack;
  let base: string;
  let adminBase: string;
  let adminToken: string;
  let key: string;
  let keyId: string;
  let websiteId: string;
  let workspaceId: string;
  let broker: TcpProxy;
  const received: Envelope[] = [];

  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${adminBase}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await r.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    const servers = await distributedServers([...SERVICES, 'crm-sync']);
    cleanup = servers.cleanup;
    const amqp = new URL(servers.amqpUrl);
    broker = await startTcpProxy({ host: amqp.hostname, port: Number(amqp.port) });
    amqp.port = String(broker.port);
    const recorder = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        const record = async (e: Envelope) => void received.push(e);
        return { consumers: { 'conversion.value_changed': record, 'conversion.updated': record, 'stage.changed': record, 'outcome.writeback_requested': record } };
      },
    });
    stack = await startStack({
      targets: ['gateway', 'contacts'],
      standIns: [recorder],
      env: {
        SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
        SIGHTLINE_REDIS_URL: servers.redisUrl,
        SIGHTLINE_AMQP_URL: amqp.toString(),
        SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      },
    });
    proc = stack.proc;
    base = `http://127.0.0.1:${proc.publicPort}`;
    adminBase = `http://127.0.0.1:${proc.adminPort}`;
    adminToken = proc.settings.adminToken;
    const ws = await admin('POST', '/workspaces', { name: 'Outbox', plan: 'internal', currency: 'EUR' });
    workspaceId = String(ws['id']);
    websiteId = String((await admin('POST', `/workspaces/${workspaceId}/websites`, { domain: 'outbox.test' }))['id']);
    const created = await admin('POST', '/keys', { workspace_id: workspaceId });
    key = String(created['key']);
    keyId = String(created['key_id']);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await broker?.close();
    await cleanup?.();
  }, 60_000);

  it('publishes each change exactly once after the broker comes back', async () => {
    const conversion: ConversionCreatedV1 = { ...MESSAGE_EXAMPLES['conversion.created'], conversion_id: randomUUID(), website_id: websiteId, workspace_id: workspaceId };
    await proc.bus.publish({ type: 'conversion.created', source: 'ingest', workspace_id: workspaceId, website_id: websiteId, payload: conversion });
    const path = `/v1/contacts/${conversion.conversion_id}`;
    const headers = { authorization: `Bearer ${key}` };
    await waitFor('the contact', async () => ((await fetch(`${base}${path}`, { headers })).status === 200 ? true : undefined));

    // Hold the relay so the write is committed with its messages still in the outbox.
    await admin('POST', '/contacts/outbox/pause');
    const patched = await fetch(`${base}${path}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': 'outage-1' },
      body: JSON.stringify({ sales_value: 4321, lifecycle_stage_raw: 'customer' }),
    });
    expect(patched.status).toBe(200);
    expect((await admin('GET', '/contacts/outbox'))['pending']).toBe(3);

    try {
      broker.cut();
      // The relay now tries to publish to a broker that is down: nothing may be dropped.
      await admin('POST', '/contacts/outbox/resume');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(received).toEqual([]);
      expect((await admin('GET', '/contacts/outbox'))['pending']).toBe(3);
    } finally {
      broker.restore();
    }

    await waitFor('the three changes', () => (received.length >= 3 ? true : undefined), 60_000);
    await waitFor('an empty outbox', async () => ((await admin('GET', '/contacts/outbox'))['pending'] === 0 ? true : undefined));
    // Give a duplicate, if any, time to show up.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(received.map((e) => e.type).sort()).toEqual(['conversion.value_changed', 'outcome.writeback_requested', 'stage.changed']);
    expect(new Set(received.map((e) => e.id)).size).toBe(3);
    expect(received.every((e) => e.source === `api:${keyId}`)).toBe(true);
    expect((received.find((e) => e.type === 'conversion.value_changed')?.payload as { sales_value: number }).sales_value).toBe(4321);

    // The bus works again both ways: an RPC through the gateway, and a new write end to end.
    const later = await fetch(`${base}${path}`, { method: 'PATCH', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ notes: 'after the outage' }) });
    expect(later.status).toBe(200);
    await waitFor('the later change', () => (received.some((e) => e.type === 'conversion.updated') ? true : undefined));
  }, 180_000);
});
