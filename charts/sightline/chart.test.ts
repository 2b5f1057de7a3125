// The Helm chart, checked as CI can without a cluster: `helm lint --strict` and `helm template`
// for every mode (distributed, embedded, each operator-managed store, every registered target),
// every rendered object validated against the Kubernetes API schemas (kubernetes-models), the
// operators' custom resources against schemas of the fields the chart renders, references between
// objects, values.schema.json, and the secrets rules. helm comes from an npm package (testing/k8s-tools.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { TARGET_NAMES } from '../../packages/cli/src/registry';
import { CHART_DIR, Helm, validateAgainstKubernetesSchemas, type K8sObject, type Values } from './testing/helm';
import { coreObjectsInside, OPERATOR_SCHEMAS } from './testing/operator-schemas';
import { brokenReferences, type ExternalSecrets } from './testing/references';

const STORES = ['amqp', 'postgres', 'clickhouse', 'redis'] as const;
type Store = (typeof STORES)[number];

const noExternal = (store: Store): Values => ({ externalStores: { [store]: { url: '', secretKeyRef: { name: '', key: '' } } } });
const MANAGED_ON: Record<Store, Values> = {
  postgres: { managedStores: { postgres: { enabled: true } } },
  amqp: { managedStores: { amqp: { enabled: true } } },
  clickhouse: { managedStores: { clickhouse: { enabled: true, password: 'ci-clickhouse-password-0123' } } },
  redis: { managedStores: { redis: { enabled: true, password: 'ci-redis-password-0123456' } } },
};

interface Mode {
  files: string[];
  values: Values[];
  /** Secrets the mode expects to exist outside the render (name -> keys). */
  external: ExternalSecrets;
}
const DISTRIBUTED_EXTERNAL: ExternalSecrets = { 'sightline-postgres': ['url'], 'sightline-redis': ['url'] };
const MODES: Record<string, Mode> = {
  distributed: { files: ['distributed'], values: [], external: DISTRIBUTED_EXTERNAL },
  embedded: { files: ['embedded'], values: [], external: {} },
  ...Object.fromEntries(
    STORES.map((store) => [
      `distributed, ${store} from managedStores`,
      { files: ['distributed'], values: [noExternal(store), MANAGED_ON[store]], external: DISTRIBUTED_EXTERNAL },
    ]),
  ),
  'distributed, every store from managedStores': {
    files: ['operators'],
    values: [],
    external: { 'sightline-secrets': ['admin-token', 'cursor-secret', 'credentials-key'], 'sightline-clickhouse': ['password'], 'sightline-redis': ['password'] },
  },
  'distributed, every registered target': {
    files: ['distributed'],
    values: [{ services: Object.fromEntries(TARGET_NAMES.map((name) => [name, { enabled: true }])) }],
    external: DISTRIBUTED_EXTERNAL,
  },
};

const helm = new Helm();
afterAll(() => helm.dispose());

const rendered: Record<string, K8sObject[]> = {};
beforeAll(async () => {
  await Promise.all(
    Object.entries(MODES).map(async ([name, mode]) => {
      rendered[name] = await helm.objects(mode.files, mode.values);
    }),
  );
});

const deployments = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'Deployment');
type Container = { args: string[]; env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[] };
const container = (deployment: K8sObject): Container =>
  ((deployment.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0])!;
const targetOf = (deployment: K8sObject): string => {
  const arg = container(deployment).args.find((a) => a.startsWith('--target='));
  if (!arg) throw new Error(`${deployment.metadata.name} has no --target`);
  return arg.slice('--target='.length);
};
const envOf = (deployment: K8sObject, name: string) => container(deployment).env.find((e) => e.name === name);
const failure = async (files: string[], values: Values[]): Promise<string> => {
  const result = await helm.template(files, values);
  expect(result.ok).toBe(false);
  return result.stderr;
};

describe('chart as committed', () => {
  it('has no subchart dependencies and no Bitnami references', () => {
    const chart = readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8');
    expect(chart).not.toMatch(/^dependencies:/m);
    const texts = [chart, readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'), ...readdirSync(join(CHART_DIR, 'templates')).map((f) => readFileSync(join(CHART_DIR, 'templates', f), 'utf8'))];
    for (const text of texts) expect(text.toLowerCase()).not.toContain('bitnami');
  });

  it('derives nothing at render time: no lookup, no random or generated values', () => {
    for (const file of readdirSync(join(CHART_DIR, 'templates'))) {
      // The code of every template action, without its comments and string literals.
      const actions = [...readFileSync(join(CHART_DIR, 'templates', file), 'utf8').matchAll(/\{\{([\s\S]*?)\}\}/g)]
        .map((m) => m[1]!.replace(/\/\*[\s\S]*?\*\//g, '').replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""'))
        .join('\n');
      expect({ file, found: actions.match(/\b(lookup|rand[A-Za-z]*|uuidv4|gen(PrivateKey|CA|SelfSignedCert|SignedCert)|now)\b/g) }).toEqual({ file, found: null });
    }
  });
});

describe.each(Object.keys(MODES))('mode: %s', (mode) => {
  it('passes helm lint --strict', async () => {
    const result = await helm.lint(MODES[mode]!.files, MODES[mode]!.values);
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.ok).toBe(true);
  });

  it('renders objects that satisfy the Kubernetes API schemas', async () => {
    const objects = rendered[mode]!;
    const operatorResources = objects.filter((o) => `${o.apiVersion}/${o.kind}` in OPERATOR_SCHEMAS);
    const report = await validateAgainstKubernetesSchemas([...objects, ...operatorResources.flatMap(coreObjectsInside)]);
    expect(report.problems).toEqual([]);
    // Only the operators' custom resources lack a Kubernetes schema; each is checked just below.
    expect(report.noModel.map((o) => `${o.apiVersion}/${o.kind}`).sort()).toEqual(operatorResources.map((o) => `${o.apiVersion}/${o.kind}`).sort());
    expect(report.checked.length).toBeGreaterThan(5);
  });

  it("renders operators' custom resources with only the fields their CRDs define", () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    for (const resource of rendered[mode]!.filter((o) => `${o.apiVersion}/${o.kind}` in OPERATOR_SCHEMAS)) {
      const validate = ajv.compile(OPERATOR_SCHEMAS[`${resource.apiVersion}/${resource.kind}`]!);
      expect({ resource: resource.metadata.name, ok: validate(resource), errors: validate.errors ?? null }).toEqual({ resource: resource.metadata.name, ok: true, errors: null });
    }
  });

  it('renders objects whose references resolve', () => {
    expect(brokenReferences(rendered[mode]!, MODES[mode]!.external)).toEqual([]);
  });

  it('starts only targets of the module registry', () => {
    const targets = deployments(rendered[mode]!).map(targetOf);
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect([...TARGET_NAMES, 'all']).toContain(target);
  });
});

describe('targets', () => {
  it('lists in values.schema.json exactly the registry targets', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: { services: { propertyNames: { enum: string[] }; properties: Record<string, unknown> } } };
    const expected = [...TARGET_NAMES].sort();
    expect([...schema.properties.services.propertyNames.enum].sort()).toEqual(expected);
    expect(Object.keys(schema.properties.services.properties).sort()).toEqual(expected);
  });

  it('runs every registry target by default in distributed mode', () => {
    expect(deployments(rendered['distributed']!).map(targetOf).sort()).toEqual([...TARGET_NAMES].sort());
  });

  it('renders one Deployment per registered target when all are enabled', () => {
    expect(deployments(rendered['distributed, every registered target']!).map(targetOf).sort()).toEqual([...TARGET_NAMES].sort());
  });

  it('refuses a misspelt service name', async () => {
    expect(await failure(['distributed'], [{ services: { gatway: { enabled: true } } }])).toMatch(/gatway/);
  });

  it('scales ingest up to the intake partitions, by replicas or autoscaling, and no further', async () => {
    const ingestOf = async (values: Values) => deployments(await helm.objects(['distributed'], [values])).find((d) => targetOf(d) === 'ingest')!;
    for (const replicas of [0, 1, 4]) {
      expect(((await ingestOf({ config: { busPartitions: 4 }, services: { ingest: { replicas } } })).spec as { replicas: number }).replicas).toBe(replicas);
    }
    expect(await failure(['distributed'], [{ config: { busPartitions: 4 }, services: { ingest: { replicas: 5 } } }])).toMatch(/services\.ingest\.replicas \(5\) is more than config\.busPartitions \(4\)/);
    expect(await failure(['distributed'], [{ config: { busPartitions: 4 }, services: { ingest: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 } } } }])).toMatch(/maxReplicas \(5\) is more than config\.busPartitions \(4\)/);
    const scaled = await helm.objects(['distributed'], [{ config: { busPartitions: 4 }, services: { ingest: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 4 } } } }]);
    const hpa = scaled.find((o) => o.kind === 'HorizontalPodAutoscaler' && JSON.stringify(o.spec).includes('ingest'));
    expect(hpa?.spec).toMatchObject({ minReplicas: 2, maxReplicas: 4 });
    // Every process reads the partition count from the shared ConfigMap.
    const config = scaled.find((o) => o.kind === 'ConfigMap' && o.data?.['SIGHTLINE_BUS_PARTITIONS'] !== undefined);
    expect(config?.data?.['SIGHTLINE_BUS_PARTITIONS']).toBe('4');
    expect(await failure(['distributed'], [{ config: { busPartitions: 0 } }])).toMatch(/busPartitions/);
  });

  it('checks resource shapes', async () => {
    expect(await failure(['distributed'], [{ services: { gateway: { resources: { limits: { memory: '1GB' } } } } }])).toMatch(/resources\/limits\/memory/);
    expect(await failure(['distributed'], [{ services: { gateway: { resources: { limit: { memory: '1Gi' } } } } }])).toMatch(/resources/);
    const gateway = deployments(await helm.objects(['distributed'], [{ services: { gateway: { resources: { limits: { memory: '1Gi', cpu: 1.5 } } } } }])).find((d) => targetOf(d) === 'gateway')!;
    expect((gateway.spec as { template: { spec: { containers: { resources: unknown }[] } } }).template.spec.containers[0]!.resources).toEqual({ requests: { cpu: '200m', memory: '256Mi' }, limits: { memory: '1Gi', cpu: 1.5 } });
  });
});

describe('secrets', () => {
  it('renders the same manifests every time', async () => {
    const [first, second] = await Promise.all([helm.template(['distributed'], []), helm.template(['distributed'], [])]);
    expect(first.ok).toBe(true);
    expect(second.stdout).toBe(first.stdout);
  });

  it('refuses to render without secrets, saying what to set', async () => {
    const stderr = await failure([], [{ externalStores: { amqp: { url: 'amqp://a' }, postgres: { url: 'postgres://a' }, clickhouse: { url: 'http://a' }, redis: { url: 'redis://a' } } }]);
    expect(stderr).toContain('secrets.adminToken is required');
    expect(stderr).toContain('secrets.existingSecret');
  });

  it('takes secrets of 16 characters and refuses 15', async () => {
    expect(await failure(['distributed'], [{ secrets: { cursorSecret: 'x'.repeat(15) } }])).toMatch(/secrets\/cursorSecret/);
    expect(await failure(['distributed'], [{ secrets: { credentialsKey: 'x'.repeat(15) } }])).toMatch(/secrets\/credentialsKey/);
    const secret = (await helm.objects(['distributed'], [{ secrets: { cursorSecret: 'x'.repeat(16) } }])).find((o) => o.kind === 'Secret')!;
    expect(Buffer.from(secret.data!['cursor-secret']!, 'base64').toString()).toBe('x'.repeat(16));
  });

  it('requires the credentials key while crm-sync or automations runs, and only then', async () => {
    const none = { secrets: { credentialsKey: '' } };
    expect(await failure(['distributed'], [none])).toContain('secrets.credentialsKey is required');
    expect(await failure(['embedded'], [none])).toContain('secrets.credentialsKey is required');
    expect(await failure(['distributed'], [none, { services: { 'crm-sync': { enabled: false } } }])).toContain('secrets.credentialsKey is required');
    expect(await failure(['distributed'], [none, { services: { automations: { enabled: false } } }])).toContain('secrets.credentialsKey is required');
    const objects = await helm.objects(['distributed'], [none, { services: { 'crm-sync': { enabled: false }, automations: { enabled: false } } }]);
    expect(Object.keys(objects.find((o) => o.kind === 'Secret')!.data!)).not.toContain('credentials-key');
  });

  it('gives the credentials key to crm-sync and automations (or the embedded pod) alone', () => {
    for (const mode of ['distributed', 'embedded']) {
      const holders = deployments(rendered[mode]!).filter((d) => envOf(d, 'SIGHTLINE_CREDENTIALS_KEY')).map(targetOf).sort();
      expect(holders).toEqual(mode === 'embedded' ? ['all'] : ['automations', 'crm-sync']);
    }
    const crmSync = deployments(rendered['distributed']!).find((d) => targetOf(d) === 'crm-sync')!;
    expect(envOf(crmSync, 'SIGHTLINE_CREDENTIALS_KEY')!.valueFrom!.secretKeyRef).toEqual({ name: 'rel-sightline-secrets', key: 'credentials-key' });
  });

  it('scrapes /metrics with the metrics token when one is given, else with the admin token', async () => {
    const monitorOf = (objects: K8sObject[]) => objects.find((o) => o.kind === 'ServiceMonitor')!;
    const credentials = (objects: K8sObject[]) => (monitorOf(objects).spec as { endpoints: { authorization: { type: string; credentials: { name: string; key: string } } }[] }).endpoints[0]!.authorization;
    const withoutToken = await helm.objects(['distributed'], [{ serviceMonitor: { enabled: true } }]);
    expect(credentials(withoutToken)).toEqual({ type: 'Bearer', credentials: { name: 'rel-sightline-secrets', key: 'admin-token' } });
    for (const d of deployments(withoutToken)) expect(envOf(d, 'SIGHTLINE_METRICS_TOKEN')).toBeUndefined();

    const withToken = await helm.objects(['distributed'], [{ serviceMonitor: { enabled: true }, secrets: { metricsToken: 'ci-metrics-token-0123456789' } }]);
    expect(credentials(withToken)).toEqual({ type: 'Bearer', credentials: { name: 'rel-sightline-secrets', key: 'metrics-token' } });
    expect(Object.keys(withToken.find((o) => o.kind === 'Secret')!.data!)).toContain('metrics-token');
    for (const d of deployments(withToken)) expect(envOf(d, 'SIGHTLINE_METRICS_TOKEN')!.valueFrom!.secretKeyRef).toEqual({ name: 'rel-sightline-secrets', key: 'metrics-token' });

    const mine = await helm.objects(['operators'], [{ serviceMonitor: { enabled: true }, secrets: { metricsTokenKey: 'prometheus-token' } }]);
    expect(credentials(mine).credentials).toEqual({ name: 'sightline-secrets', key: 'prometheus-token' });
    expect(await failure(['distributed'], [{ secrets: { metricsToken: 'too-short' } }])).toContain('metricsToken');
  });

  it('reads everything from an existing Secret and renders none', () => {
    const objects = rendered['distributed, every store from managedStores']!;
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    for (const d of deployments(objects)) {
      expect(envOf(d, 'SIGHTLINE_ADMIN_TOKEN')!.valueFrom!.secretKeyRef.name).toBe('sightline-secrets');
      expect(envOf(d, 'SIGHTLINE_CURSOR_SECRET')!.valueFrom!.secretKeyRef.name).toBe('sightline-secrets');
    }
  });
});

describe('stores', () => {
  it.each(STORES)('refuses a distributed install with no %s server', async (store) => {
    const stderr = await failure(['distributed'], [noExternal(store)]);
    expect(stderr).toContain(`distributed mode needs a ${store} server`);
  });

  it.each(STORES)('refuses %s given both as external and managed', async (store) => {
    expect(await failure(['distributed'], [MANAGED_ON[store]])).toContain(`${store} is set twice`);
  });

  it('refuses a store URL kept in a Secret the chart does not create', async () => {
    expect(await failure(['distributed'], [{ secrets: { existingSecret: 'mine' } }])).toMatch(/externalStores\.(amqp|clickhouse)\.url is kept in the chart's Secret/);
  });

  it('refuses managed ClickHouse and Redis without a password, or with one that does not fit in a URL', async () => {
    for (const store of ['clickhouse', 'redis'] as const) {
      expect(await failure(['distributed'], [noExternal(store), { managedStores: { [store]: { enabled: true } } }])).toContain(`managedStores.${store} needs a password`);
      expect(await failure(['distributed'], [noExternal(store), { managedStores: { [store]: { enabled: true, password: 'with/slash-0123456789' } } }])).toMatch(new RegExp(`managedStores/${store}/password`));
    }
  });

  it('wires each managed store to what its operator creates', () => {
    const objects = rendered['distributed, every store from managedStores']!;
    const gateway = deployments(objects).find((d) => targetOf(d) === 'gateway')!;
    expect(envOf(gateway, 'SIGHTLINE_POSTGRES_URL')!.valueFrom!.secretKeyRef).toEqual({ name: 'rel-sightline-pg-app', key: 'uri' });
    expect(envOf(gateway, 'SIGHTLINE_AMQP_URL')!.value).toBe('amqp://$(RABBITMQ_USERNAME):$(RABBITMQ_PASSWORD)@rel-sightline-rabbitmq.sightline.svc:5672');
    expect(envOf(gateway, 'SIGHTLINE_CLICKHOUSE_URL')!.value).toBe('http://sightline:$(CLICKHOUSE_PASSWORD)@clickhouse-rel-sightline-ch.sightline.svc:8123');
    expect(envOf(gateway, 'SIGHTLINE_REDIS_URL')!.value).toBe('redis://:$(REDIS_PASSWORD)@rel-sightline-redis.sightline.svc:6379');
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toEqual(expect.arrayContaining(['Cluster/rel-sightline-pg', 'RabbitmqCluster/rel-sightline-rabbitmq', 'ClickHouseInstallation/rel-sightline-ch', 'StatefulSet/rel-sightline-redis', 'Service/rel-sightline-redis']));
    // The ClickHouse user's password is the one the services put in their URL.
    const chi = objects.find((o) => o.kind === 'ClickHouseInstallation')!;
    const users = ((chi.spec as { configuration: { users: Record<string, unknown> } }).configuration.users);
    expect(users['sightline/password']).toEqual({ valueFrom: { secretKeyRef: envOf(gateway, 'CLICKHOUSE_PASSWORD')!.valueFrom!.secretKeyRef } });
  });

  it('renders no operator resource unless asked', () => {
    for (const mode of ['distributed', 'embedded']) {
      expect(rendered[mode]!.filter((o) => `${o.apiVersion}/${o.kind}` in OPERATOR_SCHEMAS || o.kind === 'StatefulSet')).toEqual([]);
    }
  });
});

describe('network policy', () => {
  const policy = (objects: K8sObject[]) => objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-sightline')!;
  type Rule = { ports: { port: string }[]; from?: unknown[] };

  it('opens the admin port only to pods of the release', () => {
    const rules = (policy(rendered['distributed']!).spec as { ingress: Rule[] }).ingress;
    const admin = rules.filter((r) => r.ports.some((p) => p.port === 'admin'));
    expect(admin).toEqual([{ ports: [{ port: 'admin', protocol: 'TCP' }], from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'sightline', 'app.kubernetes.io/instance': 'rel' } } }] }]);
    const pub = rules.filter((r) => r.ports.some((p) => p.port === 'http'));
    expect(pub).toEqual([{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    expect(rules).toHaveLength(2);
  });

  it('adds the peers of adminFrom, such as a Prometheus namespace', async () => {
    const peer = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const rules = (policy(await helm.objects(['distributed'], [{ networkPolicy: { adminFrom: [peer] } }])).spec as { ingress: Rule[] }).ingress;
    expect(rules.find((r) => r.ports[0]!.port === 'admin')!.from).toEqual([expect.objectContaining({ podSelector: expect.anything() }), peer]);
  });
});
