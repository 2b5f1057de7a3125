// `sightline mcp`: the public API as MCP tools for AI agents, over stdio. Tools come from the
// OpenAPI document the instance serves (mcp.tools.ts); calls go through the typed client with the
// caller's API key, so the key's scopes and limits apply as to any client (429 and 5xx are retried
// after Retry-After). A problem answer becomes a tool error carrying the problem document, its
// `remediation` and `allowed` included. The SDK's low-level Server is used because the input
// schemas are JSON Schema taken from the document, not schemas written in code.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createSightlineClient, isProblem, problemKind, type FetchLike, type Problem, type Schemas, type SightlineClient } from '@sightline/client';
import { openApiDocument } from '@sightline/proto-schemas';
import { toolsFromDocument, type OpenApiLike, type ToolDefinition } from './mcp.tools';

export interface McpServerOptions {
  /** Public API base URL, without /v1. */
  baseUrl: string;
  apiKey: string;
  /** Version reported to the MCP client. */
  version?: string;
  fetch?: FetchLike;
}

type Identity = Schemas['Identity'];
type LooseCall = (path: string, init: { params: Record<string, Record<string, unknown>>; body?: unknown }) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export async function createMcpServer(options: McpServerOptions): Promise<Server> {
  const client = createSightlineClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const [document, identity] = await Promise.all([servedDocument(options), whoAmI(client)]);
  // A key without a tool's scope would only ever get 403 from it: such tools are not offered.
  const scopes = identity ? new Set<string>(identity.key.scopes) : null;
  const tools = toolsFromDocument(document).filter((t) => t.scope === null || scopes === null || scopes.has(t.scope));
  const byName = new Map(tools.map((t) => [t.name, t]));

  const server = new Server({ name: 'sightline', version: options.version ?? '1.0.0' }, { capabilities: { tools: {} }, instructions: instructionsFor(identity) });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: { readOnlyHint: t.method === 'get', openWorldHint: false } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; list the tools to see what this key can call.`);
    return callTool(client, tool, request.params.arguments ?? {});
  });
  return server;
}

/** Serves over stdin/stdout until the client closes the stream. */
export async function runMcpServer(options: McpServerOptions): Promise<void> {
  const server = await createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
}

async function callTool(client: SightlineClient, tool: ToolDefinition, input: Record<string, unknown>): Promise<CallToolResult> {
  const params: Record<string, Record<string, unknown>> = { query: {}, path: {}, header: {} };
  const body: Record<string, unknown> = {};
  for (const arg of tool.arguments) {
    const value = input[arg.name];
    if (value === undefined) continue;
    if (arg.in === 'body') body[arg.wireName] = value;
    else (params[arg.in] ??= {})[arg.wireName] = value;
  }
  const unknown = Object.keys(input).filter((name) => !tool.arguments.some((a) => a.name === name));
  if (unknown.length > 0) {
    return errorResult(`Unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}.`, { allowed: tool.arguments.map((a) => a.name) });
  }
  const call = (tool.method === 'get' ? client.GET : client.POST) as unknown as LooseCall;
  try {
    const { data, error, response } = await call(tool.path, { params, ...(tool.method === 'post' ? { body } : {}) });
    if (error !== undefined || !response.ok) return problemResult(error, response.status);
    return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
  } catch (failure) {
    return errorResult(`The Sightline API could not be reached: ${failure instanceof Error ? failure.message : String(failure)}`, {});
  }
}

/** A problem document as a tool error: a sentence for the model, and the document itself. */
function problemResult(error: unknown, status: number): CallToolResult {
  if (!isProblem(error)) return errorResult(`The API answered ${status} without a problem document.`, { status });
  const problem: Problem = error;
  const lines = [
    `${problem.title} (${status} ${problemKind(problem)}): ${problem.detail}`,
    ...(problem.remediation ? [`Remediation: ${problem.remediation}`] : []),
    ...(problem.allowed ? [`Allowed values: ${problem.allowed.join(', ')}`] : []),
  ];
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }, { type: 'text', text: JSON.stringify(problem) }],
    structuredContent: { problem },
  };
}

function errorResult(message: string, extra: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], structuredContent: { error: message, ...extra } };
}

/** The document the instance serves (it describes exactly that server); the built-in one when it serves none. */
async function servedDocument(options: McpServerOptions): Promise<OpenApiLike> {
  try {
    const doFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    const response = await doFetch(new Request(`${options.baseUrl.replace(/\/+$/, '')}/v1/openapi.json`));
    if (response.ok) {
      const served = (await response.json()) as Partial<OpenApiLike>;
      if (served.paths) return served as OpenApiLike;
    }
  } catch {
    // Unreachable now: tools come from the built-in document, and each call reports the failure.
  }
  return openApiDocument as unknown as OpenApiLike;
}

async function whoAmI(client: SightlineClient): Promise<Identity | null> {
  try {
    const { data } = await client.GET('/v1/me');
    return data?.data ?? null;
  } catch {
    return null;
  }
}

function instructionsFor(identity: Identity | null): string {
  const general = 'Sightline attribution analytics. Analytics tools take a window as `period` (plain language, e.g. "last 30 days") or `from`/`to`. Errors come back as tool errors carrying a problem document: follow its `remediation`, and pick from `allowed` when a value was outside a fixed set. Prefer one wide query to many narrow ones: at most four analytics queries run at once.';
  if (!identity) return `${general} The API key could not be verified at start; calls will report why.`;
  const plan = identity.plan;
  const rate = plan.requests_per_minute === null ? 'no per-minute limit' : `${plan.requests_per_minute} requests a minute`;
  const sites = identity.websites.map((w) => `${w.domain} (${w.timezone}, ${w.currency})`).join('; ');
  return `${general} This key ("${identity.key.name}") holds scopes ${identity.key.scopes.join(', ')}; plan ${plan.name}: ${rate}, ${plan.concurrent_analytics_queries} concurrent analytics queries. Websites: ${sites}.${identity.websites.length > 1 ? ' Pass `website` (a domain) on every call.' : ''}`;
}
