// A minimal ClickHouse HTTP interface backed by chDB, so the `@clickhouse/client` driver can be
// tested with no ClickHouse server (none can be installed here). It implements what the client
// sends: `/ping`; GET/POST `/` with `query` in the URL and/or the body; `database`;
// `param_<name>` query parameters; other URL parameters as settings; `INSERT ... FORMAT
// JSONEachRow` with the rows in the body; `X-ClickHouse-*` response headers; and errors as
// HTTP 500 with `Code: N. DB::Exception: ...` text, which the client turns into its usual error.
//
// It runs as a child process (`startClickHouseShim`), because chDB binds one data directory per
// process and the test process may be using chDB itself.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { Session as ChdbSession } from 'chdb';

/** URL parameters that are part of the HTTP protocol rather than settings. */
const NOT_SETTINGS = new Set([
  'query', 'database', 'query_id', 'session_id', 'session_timeout', 'session_check', 'role', 'user', 'password',
  'default_format', 'compress', 'decompress', 'buffer_size', 'quota_key', 'enable_http_compression',
  'wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms',
  'http_response_buffer_size', 'http_wait_end_of_query', 'add_http_cors_header', 'http_zlib_compression_level',
]);

const CONTENT_TYPES: Record<string, string> = {
  JSONEachRow: 'application/x-ndjson; charset=UTF-8',
  JSON: 'application/json; charset=UTF-8',
  JSONCompact: 'application/json; charset=UTF-8',
  CSV: 'text/csv; charset=UTF-8; header=absent',
  TabSeparated: 'text/tab-separated-values; charset=UTF-8',
};

const INSERT_FORMAT = /^\s*INSERT\s+INTO\s+([A-Za-z0-9_.]+)\s*(?:\(([^)]*)\))?\s*FORMAT\s+(JSONEachRow|JSONCompactEachRow|TSV|TabSeparated|CSV)\s*$/i;

class ShimError extends Error {
  constructor(readonly code: number, message: string, readonly type: string, readonly status = 500) {
    super(message);
  }
}

/** ClickHouse SQL string literal: the engine decodes it back to exactly `value`. */
function sqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function settingLiteral(value: string): string {
  return /^-?\d+(\.\d+)?$/.test(value) ? value : sqlString(value);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip') return gunzipSync(raw);
  if (encoding === 'deflate') return inflateSync(raw);
  if (encoding !== '' && encoding !== 'identity') throw new ShimError(1001, `unsupported Content-Encoding ${encoding}`, 'STD_EXCEPTION', 400);
  return raw;
}

/** Multipart bodies carry the query and `param_*` entries when the client is asked to. */
function parseMultipart(body: Buffer, contentType: string): Map<string, string> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const parts = new Map<string, string>();
  if (!boundary) return parts;
  const marker = `--${boundary[1] ?? boundary[2] ?? ''}`;
  for (const section of body.toString('utf8').split(marker)) {
    const headerEnd = section.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const name = /name="([^"]+)"/.exec(section.slice(0, headerEnd));
    if (name?.[1]) parts.set(name[1], section.slice(headerEnd + 4).replace(/\r\n$/, ''));
  }
  return parts;
}

function errorResponse(res: ServerResponse, error: unknown): void {
  let code = 1001;
  let text: string;
  let status = 500;
  if (error instanceof ShimError) {
    code = error.code;
    status = error.status;
    text = `Code: ${code}. DB::Exception: ${error.message}. (${error.type}) (version shim)`;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    const found = /Code: (\d+)\./.exec(message);
    if (found?.[1]) {
      code = Number(found[1]);
      text = message;
    } else {
      text = `Code: ${code}. DB::Exception: ${message}. (STD_EXCEPTION) (version shim)`;
    }
  }
  if (res.headersSent) {
    res.end(`\n${text}\n`);
    return;
  }
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Exception-Code': String(code),
    'X-ClickHouse-Server-Display-Name': 'chdb-shim',
  });
  res.end(`${text}\n`);
}

export interface ShimServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the shim in this process over chDB at `dataDir`. Used by the child process runner. */
export async function serveClickHouseShim(options: { dataDir: string; port?: number }): Promise<ShimServer> {
  const { Session } = (await import('chdb')) as typeof import('chdb');
  // Keeps the data directory bound for the life of the server; requests use their own connections.
  const anchor: ChdbSession = new Session(options.dataDir);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://shim');
    if (url.pathname === '/ping') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
      res.end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') throw new ShimError(1001, `no handler for ${url.pathname}`, 'STD_EXCEPTION', 404);
    if (req.method !== 'GET' && req.method !== 'POST') throw new ShimError(1001, `method ${req.method ?? ''} not allowed`, 'STD_EXCEPTION', 405);

    const entries = new Map<string, string>();
    for (const [name, value] of url.searchParams) entries.set(name, value);
    let body = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.startsWith('multipart/form-data')) {
      for (const [name, value] of parseMultipart(body, contentType)) entries.set(name, value);
      body = Buffer.alloc(0);
    }

    // As on the server: the URL's query comes first and the body follows it (INSERT data).
    const urlQuery = entries.get('query');
    const queryText = urlQuery ?? body.toString('utf8');
    const data = urlQuery !== undefined ? body : Buffer.alloc(0);
    if (queryText.trim() === '') throw new ShimError(62, 'Empty query', 'SYNTAX_ERROR');

    const settings: string[] = [];
    for (const [name, value] of entries) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      if (name.startsWith('param_')) settings.push(`${name} = ${sqlString(value)}`);
      else if (!NOT_SETTINGS.has(name)) settings.push(`${name} = ${settingLiteral(value)}`);
    }

    const queryId = entries.get('query_id') ?? randomUUID();
    const session = new Session(options.dataDir);
    try {
      const database = entries.get('database');
      if (database !== undefined && database !== '') {
        if (!/^[A-Za-z0-9_]+$/.test(database)) throw new ShimError(81, `Database ${database} does not exist`, 'UNKNOWN_DATABASE');
        await session.queryAsync(`USE ${database}`);
      }
      // Settings and parameters live on this request's own connection only.
      if (settings.length > 0) await session.queryAsync(`SET ${settings.join(', ')}`);

      const insert = INSERT_FORMAT.exec(queryText);
      if (insert?.[1] && insert[3]) {
        const columns = insert[2]?.split(',').map((c) => c.trim().replace(/^`|`$/g, '')).filter((c) => c !== '');
        const summary = data.length === 0
          ? { rowsWritten: 0, bytesWritten: 0 }
          : await session.insert({
              table: insert[1],
              values: data,
              format: insert[3] as 'JSONEachRow',
              ...(columns && columns.length > 0 ? { columns } : {}),
            });
        res.writeHead(200, {
          'Content-Type': 'text/plain; charset=UTF-8',
          'X-ClickHouse-Query-Id': queryId,
          'X-ClickHouse-Timezone': 'UTC',
          'X-ClickHouse-Server-Display-Name': 'chdb-shim',
          'X-ClickHouse-Summary': JSON.stringify({
            read_rows: '0', read_bytes: '0', written_rows: String(summary.rowsWritten),
            written_bytes: String(summary.bytesWritten), total_rows_to_read: '0', result_rows: String(summary.rowsWritten),
            result_bytes: String(summary.bytesWritten), elapsed_ns: '0',
          }),
        });
        res.end();
        return;
      }

      const sql = data.length > 0 ? `${queryText}\n${data.toString('utf8')}` : queryText;
      const format = /\bFORMAT\s+([A-Za-z]+)\s*;?\s*$/i.exec(queryText)?.[1] ?? entries.get('default_format') ?? 'TabSeparated';
      const result = await session.queryAsync(sql, { format });
      const bytes = result.bytes();
      res.writeHead(200, {
        'Content-Type': CONTENT_TYPES[format] ?? 'text/plain; charset=UTF-8',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Format': format,
        'X-ClickHouse-Timezone': 'UTC',
        'X-ClickHouse-Server-Display-Name': 'chdb-shim',
        'X-ClickHouse-Summary': JSON.stringify({
          read_rows: String(result.rowsRead), read_bytes: String(result.bytesRead), written_rows: '0',
          written_bytes: '0', total_rows_to_read: String(result.rowsRead), result_rows: '0', result_bytes: String(bytes.length),
          elapsed_ns: String(Math.round(result.elapsed * 1e9)),
        }),
      });
      res.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    } finally {
      session.close();
    }
  };

  // As ClickHouse's http_max_uri_size (1 MiB): query parameters travel in the URL, and a batch's ids
  // can take far more than Node's default 16 KiB of request line and headers.
  const server = createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    handle(req, res).catch((error: unknown) => errorResponse(res, error));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          anchor.close();
          resolve();
        });
      }),
  };
}

/**
 * Starts the shim in a child process over a fresh temporary chDB directory. `stop()` ends the
 * child and removes the directory.
 */
export async function startClickHouseShim(): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-ch-shim-'));
  const child = spawn(process.execPath, [join(__dirname, 'run-clickhouse-shim.js'), dataDir], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ClickHouse shim did not start within 30 s: ${stderr}`)), 30_000);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = /^listening (\S+)$/m.exec(out);
      if (line?.[1]) {
        clearTimeout(timer);
        resolve(line[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ClickHouse shim exited with code ${String(code)} before listening: ${stderr}`));
    });
  }).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });

  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
