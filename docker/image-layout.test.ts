// What CI can check of docker/Dockerfile without a Docker engine: no frontend pull, OCI labels,
// every COPY source exists, the ignore file keeps every source folder (Docker's own matching rules,
// via @balena/dockerignore), and the compiled output runs from the runtime stage's layout, with
// and without chDB (slim variant). Needs `npm run build` first, as `npm test` does.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { TARGET_NAMES } from '../packages/cli/src/registry';
import { copies, labels, parseDockerfile, workdir } from './testing/dockerfile';
import { buildRuntimeLayout, contextFiles, dockerignore, REPO } from './testing/runtime-layout';

const run = promisify(execFile);
const DOCKERFILE = readFileSync(join(REPO, 'docker', 'Dockerfile'), 'utf8');
const instructions = parseDockerfile(DOCKERFILE);
const runtimeStage = instructions.filter((i) => i.keyword === 'FROM').at(-1)!.stage;
const context = contextFiles();
const inContext = (path: string): boolean => {
  const rel = path.replace(/^\.\/?/, '').replace(/\/$/, '');
  return rel === '' ? context.length > 0 : context.some((f) => f === rel || f.startsWith(`${rel}/`));
};

describe('Dockerfile', () => {
  it('pulls no frontend image (no # syntax= directive)', () => {
    expect(DOCKERFILE.split('\n').filter((l) => /^\s*#\s*syntax\s*=/i.test(l))).toEqual([]);
  });

  it('builds on a supported Node.js LTS line', () => {
    const base = /^ARG NODE_IMAGE=node:(\d+)-bookworm-slim$/m.exec(DOCKERFILE);
    expect(base).not.toBeNull();
    // 24 is LTS until 2028-04-30 (docker/README.md); 20 reached end of life on 2026-04-30.
    expect(Number(base![1])).toBeGreaterThanOrEqual(24);
    expect(Number(base![1]) % 2).toBe(0); // only even-numbered lines become LTS
  });

  it('labels the runtime image with the OCI annotations', () => {
    const found = labels(instructions, runtimeStage);
    for (const key of ['title', 'description', 'licenses', 'version', 'revision', 'created', 'source', 'base.name']) {
      expect(found[`org.opencontainers.image.${key}`]).toBeTruthy();
    }
    expect(found['org.opencontainers.image.licenses']).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).license);
  });

  it('copies only sources that exist', () => {
    const problems: string[] = [];
    for (const copy of copies(instructions)) {
      for (const source of copy.sources) {
        if (copy.from === null) {
          if (!inContext(source)) problems.push(`line ${copy.line}: ${source} is not in the build context`);
          continue;
        }
        // From an earlier stage: a path it copied from the context, or one its RUN steps create.
        const stageText = instructions.filter((i) => i.stage === copy.from);
        if (stageText.length === 0) {
          problems.push(`line ${copy.line}: no stage named ${copy.from}`);
          continue;
        }
        const dir = workdir(instructions, copy.from);
        const copiedContext = stageText.some((i) => i.keyword === 'COPY' && /^\.\s+\.$/.test(i.text));
        const rel = source.startsWith(`${dir}/`) ? source.slice(dir.length + 1) : null;
        const made = stageText.some((i) => i.keyword === 'RUN' && (i.text.includes(source.replace(/\/$/, '')) || (rel === 'node_modules' && /\bnpm ci\b/.test(i.text))));
        if (!made && !(copiedContext && rel !== null && inContext(rel))) problems.push(`line ${copy.line}: ${source} is neither copied into stage ${copy.from} nor made there`);
      }
    }
    expect(problems).toEqual([]);
    // The checker itself: a path that is not there is reported.
    expect(inContext('services/no-such-service')).toBe(false);
  });
});

describe('Dockerfile.dockerignore', () => {
  const ig = dockerignore();

  it('keeps every source file of the workspaces and the root build files', () => {
    const all = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' })
      .split('\0')
      .filter((p) => /^(packages|services|proto-schemas)\//.test(p) || /^(package(-lock)?\.json|tsconfig[^/]*\.json|turbo\.json)$/.test(p));
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((p) => ig.ignores(p))).toEqual([]);
  });

  it('keeps a source folder named coverage and drops the root coverage output', () => {
    expect(ig.ignores('services/attribution/src/coverage/coverage.rpc.ts')).toBe(false);
    expect(ig.ignores('coverage/lcov.info')).toBe(true);
    expect(ig.ignores('coverage/lcov-report/index.html')).toBe(true);
  });

  it('drops dependencies and build output at any depth', () => {
    for (const path of ['node_modules/pg/package.json', 'services/ingest/node_modules/x/index.js', 'packages/kit/dist/index.js', 'services/gateway/dist/index.js', 'packages/kit/.turbo/turbo-build.log', '.git/HEAD', 'data/pglite/base']) {
      expect({ path, ignored: ig.ignores(path) }).toEqual({ path, ignored: true });
    }
  });
});

describe('compose.yaml', () => {
  const compose = parseYaml(readFileSync(join(REPO, 'docker', 'compose.yaml'), 'utf8')) as {
    'x-sightline-env': Record<string, string>;
    services: Record<string, { ports?: string[]; environment?: Record<string, string> }>;
  };

  it('has no default for any secret', () => {
    const env = compose['x-sightline-env'];
    for (const name of ['SIGHTLINE_ADMIN_TOKEN', 'SIGHTLINE_CURSOR_SECRET']) expect(env[name]).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
    expect(compose.services['crm-sync']!.environment!['SIGHTLINE_CREDENTIALS_KEY']).toMatch(/^\$\{SIGHTLINE_CREDENTIALS_KEY:\?/);
  });

  it('publishes only the public API beyond the loopback interface', () => {
    const published = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, port: String(p) })));
    expect(published.filter((p) => !p.port.startsWith('127.0.0.1:'))).toEqual([{ name: 'gateway', port: '8080:8080' }]);
    expect(published.map((p) => p.port)).toEqual(expect.arrayContaining(['127.0.0.1:9090:9090', '127.0.0.1:15672:15672']));
  });
});

describe('runtime layout', () => {
  // The runtime stage's COPY --from=build sources, as paths under /app.
  const fromBuild = copies(instructions).filter((c) => c.stage === runtimeStage && c.from === 'build').flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
  const folders = fromBuild.filter((p) => !p.includes('.') && p !== 'node_modules');
  const rootFiles = fromBuild.filter((p) => p.includes('.'));

  // Loads every service module and reports whether chDB's library got mapped, then (when asked)
  // opens an embedded analytics store, which needs chDB.
  const PROBE = `
    const { readFileSync } = require('node:fs');
    const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes('libchdb');
    (async () => {
      const services = JSON.parse(process.argv[2]);
      for (const name of services) require(name);
      const report = { loaded: services.length, chdbAfterLoad: mapped() };
      const kit = require('@sightline/kit');
      const pino = require('pino');
      const provider = kit.createStoreProvider({ logger: pino({ level: 'silent' }) });
      try {
        const store = await provider.clickhouse('layout_probe');
        await store.command('DROP DATABASE IF EXISTS layout_probe');
        report.embedded = 'opened';
      } catch (error) {
        report.embedded = error.message;
      }
      await provider.close().catch(() => undefined);
      report.chdbAfterEmbedded = mapped();
      process.stdout.write(JSON.stringify(report));
    })();`;

  const services = TARGET_NAMES.map((name) => `@sightline/service-${name}`);

  it('mirrors what the runtime stage copies', () => {
    expect(folders.sort()).toEqual(['packages', 'proto-schemas', 'services']);
    expect(rootFiles.sort()).toEqual(['package-lock.json', 'package.json']);
    expect(fromBuild).toContain('node_modules');
  });

  it.each([
    ['full', []],
    ['slim', ['@chdb']],
  ])('runs the %s image layout: lists the targets and loads every service without chDB', async (variant, omitModules) => {
    const layout = buildRuntimeLayout({ folders, rootFiles, omitModules });
    try {
      // --preserve-symlinks: modules resolve inside the layout even through the symlinked package
      // folders, so a package the image leaves out (dev-only, or @chdb in slim) is really absent.
      const env = { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production', HOME: layout, NODE_OPTIONS: '--preserve-symlinks' };
      const listed = await run(process.execPath, ['packages/cli/bin/sightline.js', 'start', '--list-targets'], { cwd: layout, env });
      expect(listed.stdout.trim().split('\n').map((l) => l.split(' ')[0])).toEqual([...TARGET_NAMES]);

      writeFileSync(join(layout, 'probe.js'), PROBE);
      const probe = await run(process.execPath, ['probe.js', JSON.stringify(services)], { cwd: layout, env, timeout: 60_000 });
      const report = JSON.parse(probe.stdout) as { loaded: number; chdbAfterLoad: boolean; embedded: string; chdbAfterEmbedded: boolean };
      expect(report.loaded).toBe(TARGET_NAMES.length);
      expect(report.chdbAfterLoad).toBe(false);
      if (variant === 'full') {
        expect(report).toEqual({ loaded: TARGET_NAMES.length, chdbAfterLoad: false, embedded: 'opened', chdbAfterEmbedded: true });
      } else {
        expect(report.embedded).toMatch(/^chDB \(the embedded analytics store\) cannot be loaded: .*Configure a ClickHouse server URL, or run an image that includes chDB$/s);
        expect(report.chdbAfterEmbedded).toBe(false);
      }
    } finally {
      rmSync(layout, { recursive: true, force: true });
    }
  });
});
