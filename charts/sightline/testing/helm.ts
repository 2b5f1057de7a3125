// Runs helm on the chart the way CI and an operator would, with values given as objects.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { k8sTools } from './k8s-tools';

const run = promisify(execFile);

export const CHART_DIR = join(__dirname, '..');

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
};

export type Values = Record<string, unknown>;

export interface HelmResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** A helm session: its own config and cache folders, and the values files written for it. */
export class Helm {
  private readonly home = mkdtempSync(join(tmpdir(), 'sightline-helm-'));
  private readonly helm = k8sTools().helm;
  private files = 0;

  /** Runs helm with the chart's CI values files (ci/<name>-values.yaml) and then each values object. */
  async exec(args: string[], ciFiles: string[], values: Values[] = []): Promise<HelmResult> {
    const flags: string[] = [];
    for (const file of ciFiles) flags.push('-f', join(CHART_DIR, 'ci', `${file}-values.yaml`));
    for (const value of values) {
      const path = join(this.home, `values-${(this.files += 1)}.json`);
      writeFileSync(path, JSON.stringify(value)); // JSON is YAML
      flags.push('-f', path);
    }
    try {
      const { stdout, stderr } = await run(this.helm, [...args, ...flags], {
        env: {
          PATH: process.env['PATH'] ?? '',
          HELM_CACHE_HOME: join(this.home, 'cache'),
          HELM_CONFIG_HOME: join(this.home, 'config'),
          HELM_DATA_HOME: join(this.home, 'data'),
        },
        maxBuffer: 64 * 1024 * 1024,
      });
      return { ok: true, stdout, stderr };
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr ?? String(error) };
    }
  }

  lint(ciFiles: string[], values: Values[] = []): Promise<HelmResult> {
    return this.exec(['lint', '--strict', CHART_DIR], ciFiles, values);
  }

  /** `helm template`; release "rel" in namespace "sightline". */
  template(ciFiles: string[], values: Values[] = []): Promise<HelmResult> {
    return this.exec(['template', 'rel', CHART_DIR, '--namespace', 'sightline'], ciFiles, values);
  }

  /** Renders and parses; throws with helm's message when the render fails. */
  async objects(ciFiles: string[], values: Values[] = []): Promise<K8sObject[]> {
    const result = await this.template(ciFiles, values);
    if (!result.ok) throw new Error(`helm template failed: ${result.stderr}`);
    return parseObjects(result.stdout);
  }

  dispose(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

export function parseObjects(manifest: string): K8sObject[] {
  return parseAllDocuments(manifest)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

export interface SchemaReport {
  checked: { kind: string; apiVersion: string; name: string }[];
  problems: { kind: string; apiVersion: string; name: string; message: string }[];
  noModel: { kind: string; apiVersion: string; name: string }[];
}

/** Validates objects against the Kubernetes API schemas (validate-objects.mjs, in plain node). */
export function validateAgainstKubernetesSchemas(objects: object[]): Promise<SchemaReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'validate-objects.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`validate-objects.mjs exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as SchemaReport);
    });
    child.stdin.end(JSON.stringify(objects));
  });
}
