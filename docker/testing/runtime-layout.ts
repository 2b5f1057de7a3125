// Rebuilds the runtime stage's /app in a temporary directory, from what the image would hold:
// the build context's files (after the ignore file) of the folders the runtime stage copies, the
// compiled dist/ folders the build stage produces, and node_modules with production packages only
// (what `npm prune --omit=dev` leaves). Sources are copied, not linked, so relative requires resolve
// inside the layout; third-party packages are symlinked (they are only read).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ignore from '@balena/dockerignore';

export const REPO = join(__dirname, '..', '..');
export const IGNORE_FILE = join(REPO, 'docker', 'Dockerfile.dockerignore');

/** Files docker would send as the build context: tracked or new (not git-ignored), minus the ignore file. */
export function contextFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((p) => p !== '' && existsSync(join(REPO, p)));
  const ig = dockerignore();
  return [...new Set(listed)].filter((p) => !ig.ignores(p)).sort();
}

export function dockerignore(): ReturnType<typeof ignore> {
  const lines = readFileSync(IGNORE_FILE, 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  return ignore().add(lines);
}

interface LockEntry {
  dev?: boolean;
  link?: boolean;
  resolved?: string;
}

/** Workspace folders from the root package.json globs (`packages/*`, `proto-schemas`, ...). */
export function workspaceDirs(files: string[]): string[] {
  const globs = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
  const dirs = new Set<string>();
  for (const file of files.filter((f) => f.endsWith('/package.json'))) {
    const dir = dirname(file);
    if (globs.some((g) => (g.endsWith('/*') ? dirname(dir) === g.slice(0, -2) : dir === g))) dirs.add(dir);
  }
  return [...dirs].sort();
}

export interface LayoutOptions {
  /** Folders the runtime stage copies from the build stage. */
  folders: string[];
  /** Root files it copies. */
  rootFiles: string[];
  /** node_modules entries to leave out (the slim variant drops `@chdb`). */
  omitModules?: string[];
}

export function buildRuntimeLayout(options: LayoutOptions): string {
  const layout = mkdtempSync(join(tmpdir(), 'sightline-layout-'));
  try {
    fillLayout(layout, options);
    return layout;
  } catch (error) {
    rmSync(layout, { recursive: true, force: true });
    throw error;
  }
}

function fillLayout(layout: string, options: LayoutOptions): void {
  const files = contextFiles();
  const copy = (rel: string) => {
    mkdirSync(dirname(join(layout, rel)), { recursive: true });
    cpSync(join(REPO, rel), join(layout, rel));
  };
  for (const rel of options.rootFiles) copy(rel);
  for (const rel of files.filter((f) => options.folders.some((d) => f.startsWith(`${d}/`)))) copy(rel);

  // What `npm run build` adds inside the image: every workspace's dist/.
  const missing: string[] = [];
  for (const ws of workspaceDirs(files).filter((w) => options.folders.some((d) => w === d || w.startsWith(`${d}/`)))) {
    const manifest = JSON.parse(readFileSync(join(REPO, ws, 'package.json'), 'utf8')) as { main?: string };
    if (!manifest.main?.startsWith('dist/')) continue;
    if (!existsSync(join(REPO, ws, manifest.main))) missing.push(`${ws}/${manifest.main}`);
    else cpSync(join(REPO, ws, 'dist'), join(layout, ws, 'dist'), { recursive: true });
  }
  if (missing.length > 0) throw new Error(`build output missing (run \`npm run build\` first): ${missing.join(', ')}`);

  // node_modules as `npm prune --omit=dev` leaves it: the lockfile's non-dev entries.
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  for (const [path, entry] of Object.entries(lock.packages)) {
    const at = path.lastIndexOf('node_modules/');
    if (at < 0 || entry.dev) continue;
    // Only the outermost node_modules level: deeper ones live inside the linked package folders.
    if (path.slice(0, at).includes('node_modules/')) continue;
    const name = path.slice(at + 'node_modules/'.length);
    if ((options.omitModules ?? []).some((m) => name === m || name.startsWith(`${m}/`))) continue;
    const target = join(layout, path);
    mkdirSync(dirname(target), { recursive: true });
    if (entry.link) {
      if (!entry.resolved) throw new Error(`package-lock.json: ${path} is a link without a target`);
      symlinkSync(relative(dirname(target), join(layout, entry.resolved)), target);
    } else if (existsSync(join(REPO, path))) {
      symlinkSync(join(REPO, path), target); // optional packages of other platforms are absent
    }
  }
}
