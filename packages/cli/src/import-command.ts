// `sightline import <kind> --website <domain> FILE`: checks its arguments, runs importFile with a
// progress bar on a terminal (plain lines otherwise), prints the first rejections and a summary,
// and fails (exit 1) when any row was rejected, so scripts notice. The importer and crm-sync's
// row rules load only when the command runs, so other commands stay quick.
import type { Command } from 'commander';
import type { AdminConnection } from './admin-client';
import type { ImportFormat } from './import-source';

export interface ImportCommandArgs {
  kind: string;
  file: string | undefined;
  website?: string;
  workspace?: string;
  format?: string;
  delimiter?: string;
  rejects?: string;
  schema?: boolean;
}

export interface ImportCommandOutput {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Between plain progress lines when stderr is not a terminal; default 5 s. */
  progressIntervalMs?: number;
}

export function registerImportCommand(program: Command, conn: () => AdminConnection): void {
  program
    .command('import <kind> [file]')
    .description('import deals, companies, contacts, spend or orders from a CSV or NDJSON file into a running instance (crm-sync)')
    .option('--website <domain|id>', 'the website the rows belong to')
    .option('--workspace <id>', 'with a website id: its workspace (no lookup through the gateway; crm-sync in a process of its own)')
    .option('--format <format>', 'csv or ndjson (default: from the file name: .csv, .tsv, .ndjson, .jsonl)')
    .option('--delimiter <char>', 'CSV field delimiter (default: "," or a tab for .tsv)')
    .option('--rejects <file>', 'write every rejected row as "line N: reason" to this file')
    .option('--schema', 'print the JSON Schema of a row of this kind and exit')
    .action(async (kind: string, file: string | undefined, opts: Omit<ImportCommandArgs, 'kind' | 'file'>) => {
      await runImportCommand(conn, { kind, file, ...opts }, { stdout: process.stdout, stderr: process.stderr });
    });
}

export async function runImportCommand(conn: () => AdminConnection, args: ImportCommandArgs, out: ImportCommandOutput): Promise<void> {
  const { IMPORT_KINDS, IMPORT_ROW_SCHEMAS, isImportKind } = await import('@sightline/service-crm-sync');
  const { importFile, PRINTED_REJECTS } = await import('./import.js');
  const { formatOf } = await import('./import-source.js');
  const { kind } = args;
  if (!isImportKind(kind)) throw new Error(`unknown import kind "${kind}"; kinds: ${IMPORT_KINDS.join(', ')}`);
  if (args.schema) {
    out.stdout.write(`${JSON.stringify(IMPORT_ROW_SCHEMAS[kind], null, 2)}\n`);
    return;
  }
  if (!args.file) throw new Error('missing FILE: sightline import <kind> --website <domain> FILE');
  if (!args.website) throw new Error('missing --website <domain>: the website the rows belong to');
  if (args.workspace && !/^[0-9a-f-]{36}$/i.test(args.website)) throw new Error('--workspace goes with a website id (--website <id>); a domain is looked up');
  const implied = formatOf(args.file);
  if (args.format !== undefined && args.format !== 'csv' && args.format !== 'ndjson') throw new Error(`--format must be csv or ndjson, got "${args.format}"`);
  const format: ImportFormat | undefined = (args.format as ImportFormat | undefined) ?? implied?.format;
  if (!format) throw new Error(`cannot tell the format of ${args.file} from its name: pass --format csv or --format ndjson`);
  const delimiter = args.delimiter === '\\t' ? '\t' : (args.delimiter ?? implied?.delimiter);
  if (delimiter !== undefined && delimiter.length !== 1) throw new Error('--delimiter must be one character (\\t for a tab)');

  const summary = await importFile(conn(), {
    kind,
    file: args.file,
    website: args.website,
    ...(args.workspace ? { workspace: args.workspace } : {}),
    format,
    ...(delimiter ? { delimiter } : {}),
    ...(args.rejects ? { rejectsFile: args.rejects } : {}),
    progress: { tty: out.stderr.isTTY === true, stream: out.stderr, ...(out.progressIntervalMs ? { intervalMs: out.progressIntervalMs } : {}) },
  });
  for (const line of summary.firstRejects) out.stdout.write(`${line}\n`);
  if (summary.rejected > summary.firstRejects.length) {
    const more = summary.rejected - summary.firstRejects.length;
    out.stdout.write(`... and ${more} more rejected rows (${args.rejects ? `all are in ${args.rejects}` : `the first ${PRINTED_REJECTS} are shown; pass --rejects FILE to keep all`})\n`);
  }
  const rate = summary.seconds > 0 ? Math.round(summary.rows / summary.seconds) : summary.rows;
  out.stdout.write(
    `imported ${args.file} (${kind}) into ${args.website}: ${summary.rows} rows in ${summary.seconds.toFixed(1)} s (${rate} rows/s); ` +
      `${summary.accepted} accepted, ${summary.rejected} rejected; ${summary.messages} messages published\n`,
  );
  if (summary.rejected > 0) {
    throw new Error(`${summary.rejected} of ${summary.rows} rows were rejected (listed above); fix them and import the file again: accepted rows are not duplicated`);
  }
}
