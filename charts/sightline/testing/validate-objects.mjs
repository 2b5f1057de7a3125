// Validates Kubernetes objects against the API schemas shipped by kubernetes-models (generated
// from the Kubernetes OpenAPI document) and @kubernetes-models/prometheus-operator. Both packages
// are ESM-only, which jest's CommonJS sandbox cannot load, so the chart test runs this file with
// plain node: a JSON array of objects on stdin, a JSON report on stdout:
//   { checked: [{ kind, name, apiVersion }], problems: [{ kind, name, message }], noModel: [{ kind, apiVersion, name }] }
// noModel lists objects of API groups these packages do not cover (operators' custom resources);
// the caller checks those itself.
const MODEL_PACKAGES = {
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const pkg = MODEL_PACKAGES[group] ?? 'kubernetes-models';
  const path = group ? `${pkg}/${group}/${version}/${kind}` : `${pkg}/${version}/${kind}`;
  try {
    return (await import(path))[kind];
  } catch (error) {
    if (error && (error.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' || error.code === 'ERR_MODULE_NOT_FOUND')) return undefined;
    throw error;
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const objects = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const report = { checked: [], problems: [], noModel: [] };
for (const object of objects) {
  const id = { kind: object.kind, apiVersion: object.apiVersion, name: object.metadata?.name };
  const Model = await modelFor(object.apiVersion, object.kind);
  if (!Model) {
    report.noModel.push(id);
    continue;
  }
  try {
    new Model(object).validate();
    report.checked.push(id);
  } catch (error) {
    report.problems.push({ ...id, message: error instanceof Error ? error.message : String(error) });
  }
}
process.stdout.write(JSON.stringify(report));
