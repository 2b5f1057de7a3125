// `sightline mcp` as an agent meets it: the built CLI spawned over stdio, driven by the MCP SDK's own
// client, against a running gateway and attribution service (embedded drivers). It lists the tools,
// calls /metrics through one, sends events, and gets a problem back as a tool error.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createLogger, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import { resolveTargets, SETTINGS_SECTIONS, TARGET_NAMES } from '../index';

const CLI = join(__dirname, '..', '..', 'bin', 'sightline.js');
const BUILT = join(__dirname, '..', '..', 'dist', 'mcp', 'mcp.server.js');

type TextContent = { type: 'text'; text: string };

describe('sightline mcp', () => {
  let proc: RunningProcess;
  let dataDir: string;
  let client: Client;
  let narrowClient: Client;

  const connect = async (apiKey: string): Promise<Client> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { PATH: process.env['PATH'] ?? '', SIGHTLINE_API_KEY: apiKey, SIGHTLINE_URL: `http://127.0.0.1:${proc.publicPort}` },
      stderr: 'pipe',
    });
    const mcp = new Client({ name: 'sightline-mcp-test', version: '1.0.0' });
    await mcp.connect(transport);
    return mcp;
  };

  beforeAll(async () => {
    // The test drives the compiled command, as an agent's host would start it.
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`npm run build\` before this test`);
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-mcp-'));
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off' }, SETTINGS_SECTIONS);
    const modules = await Promise.all(resolveTargets(['gateway', 'ingest', 'attribution']).map((entry) => entry.create(config, TARGET_NAMES)));
    proc = await startModules({ config, modules, logger: createLogger({ level: 'silent' }) });
    const admin = async (path: string, body: unknown) => {
      const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, string>;
    };
    const ws = await admin('/workspaces', { name: 'Agents', plan: 'internal', currency: 'EUR' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: 'agents.test' });
    client = await connect(String((await admin('/keys', { workspace_id: ws['id'] }))['key']));
    narrowClient = await connect(String((await admin('/keys', { workspace_id: ws['id'], scopes: ['analytics:read'] }))['key']));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await narrowClient?.close();
    await proc?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('lists the read operations and POST /events as tools described from the OpenAPI document', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['getMe', 'getSchema', 'getMetrics', 'getPaths', 'listContacts', 'getContact', 'listChanges', 'postEvents']));
    // Reads and one write: no PATCH, DELETE or other POST, and no deprecated legacy alias.
    expect(names).not.toEqual(expect.arrayContaining(['patchContact']));
    expect(names.some((n) => n.endsWith('Legacy') || /^(create|patch|delete|run)/.test(n))).toBe(false);
    const metrics = tools.find((t) => t.name === 'getMetrics');
    expect(metrics?.description).toContain('GET /v1/metrics; needs scope analytics:read');
    expect(metrics?.inputSchema.required).toEqual(['metrics']);
    expect(metrics?.inputSchema.properties?.['metrics']).toMatchObject({ type: 'array', items: { enum: expect.arrayContaining(['visitors', 'revenue']) } });
    const events = tools.find((t) => t.name === 'postEvents');
    expect(events?.inputSchema.required).toEqual(['events']);
    // The event item schema is inlined, not a $ref the agent could not follow.
    expect(JSON.stringify(events?.inputSchema)).not.toContain('$ref');
    expect(events?.inputSchema.properties?.['events']).toMatchObject({ items: { properties: { anonymous_id: { type: 'string' } } } });
    expect(events?.annotations?.readOnlyHint).toBe(false);
    expect(client.getInstructions()).toContain('analytics:read');
  });

  it('offers a key only the tools its scopes allow', async () => {
    const names = (await narrowClient.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['getMe', 'getMetrics']));
    expect(names).not.toContain('postEvents');
    expect(names).not.toContain('listContacts');
  });

  it('sends events and reads /metrics through the tools', async () => {
    const sent = await client.callTool({ name: 'postEvents', arguments: { events: [{ event_type: 'purchase', email: 'ada@example.com', revenue: 42, currency: 'EUR' }], idempotency_key: 'mcp-1' } });
    expect(sent.isError).toBeFalsy();
    expect(JSON.parse((sent.content as TextContent[])[0]?.text ?? '')).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const result = await client.callTool({ name: 'getMetrics', arguments: { metrics: ['visitors', 'conversions'], period: 'last 7 days' } });
    expect(result.isError).toBeFalsy();
    const body = JSON.parse((result.content as TextContent[])[0]?.text ?? '') as { data: Record<string, unknown>[]; meta: { window: { expression: string }; definitions: Record<string, string> } };
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toEqual(expect.objectContaining({ visitors: expect.any(Number), conversions: expect.any(Number) }));
    expect(body.meta.window.expression).toBe('last 7 days');
    expect(Object.keys(body.meta.definitions)).toEqual(expect.arrayContaining(['visitors', 'conversions']));
  });

  it('answers a bad metric name with a tool error carrying the problem, its remediation and allowed', async () => {
    const result = await client.callTool({ name: 'getMetrics', arguments: { metrics: ['visits'] } });
    expect(result.isError).toBe(true);
    const [sentence, document] = result.content as TextContent[];
    expect(sentence?.text).toMatch(/^Unknown metric \(400 unknown-metric\): /);
    expect(sentence?.text).toContain('Remediation: ');
    expect(sentence?.text).toMatch(/Allowed values: visitors, sessions, /);
    const problem = JSON.parse(document?.text ?? '') as { type: string; remediation: string; allowed: string[] };
    expect(problem.type).toMatch(/\/unknown-metric$/);
    expect(problem.remediation).toEqual(expect.any(String));
    expect(problem.allowed).toEqual(expect.arrayContaining(['visitors', 'revenue']));
    expect(result.structuredContent).toEqual({ problem });
  });

  it('refuses an argument the tool does not take, naming the ones it does', async () => {
    const result = await client.callTool({ name: 'getMetrics', arguments: { metrics: ['visitors'], metric: 'visitors' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ allowed: expect.arrayContaining(['metrics', 'group_by', 'website']) });
    await expect(client.callTool({ name: 'dropEverything', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });
});
