// Every Grafana panel (and alert rule) the chart ships queries metrics the code exports: a panel on a
// metric nobody exports stays empty and nobody notices. The exported names come from a running
// instance with every module (its /metrics), so a metric counts only if the code registers it.
// Alert rules are read as helm renders them (enabled), so a rule template that does not render fails.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { SERVICE_NAMES } from '@sightline/proto-schemas';
import { Helm } from '../charts/sightline/testing/helm';
import { startStack, type Stack } from './stack';

const CHART = join(__dirname, '..', 'charts', 'sightline');

/** Metric names a PromQL expression refers to (identifiers followed by a selector, a range or a call's end). */
function metricsIn(expr: string): string[] {
  const names = new Set<string>();
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (const match of withoutStrings.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b\s*(?=\{|\[|\)|$|\s*(?:[-+*/><=!]|by\b|without\b|offset\b|unless\b|and\b|or\b))/g)) {
    const name = match[1] as string;
    if (/^(sightline|process|nodejs|up)_?/.test(name) && name !== 'by') names.add(name);
  }
  return [...names];
}

/** Every `expr` string anywhere in a JSON document (dashboards nest them in panels and targets). */
function exprsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) exprsOf(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if ((key === 'expr' || key === 'query') && typeof inner === 'string') out.push(inner);
      else exprsOf(inner, out);
    }
  }
  return out;
}

/** The series names a metric family exposes (a histogram also has _bucket, _sum and _count). */
function seriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const typed = /^# TYPE (\S+) (\w+)/.exec(line);
    if (!typed) continue;
    const [, name, type] = typed as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

describe('dashboards and alert rules', () => {
  let stack: Stack;
  let exported: Set<string>;

  beforeAll(async () => {
    stack = await startStack({ targets: ['all'] });
    const response = await fetch(`http://127.0.0.1:${stack.proc.adminPort}/metrics`, { headers: { authorization: `Bearer ${stack.proc.settings.metricsToken}` } });
    exported = seriesNames(await response.text());
  }, 120_000);
  afterAll(async () => stack?.stop(), 60_000);

  it('reads PromQL as the test expects', () => {
    expect(metricsIn('sum(rate(sightline_bus_messages_total{direction="unroutable"}[5m])) by (service)')).toEqual(['sightline_bus_messages_total']);
    expect(metricsIn('histogram_quantile(0.95, sum by (le) (rate(sightline_x_seconds_bucket[5m])))')).toEqual(['sightline_x_seconds_bucket']);
    expect(metricsIn('process_resident_memory_bytes / 1024')).toEqual(['process_resident_memory_bytes']);
    expect(metricsIn('sum(rate(sightline_gateway_http_requests_total{status=~"5.."}[5m])) / sum(rate(sightline_gateway_http_requests_total[5m]))')).toEqual(['sightline_gateway_http_requests_total']);
    expect(metricsIn('sightline_nope_total > 0')).toEqual(['sightline_nope_total']);
  });

  it('exports the bus counter', () => {
    expect(exported.has('sightline_bus_messages_total')).toBe(true);
  });

  const dashboards = readdirSync(join(CHART, 'dashboards')).filter((f) => f.endsWith('.json'));
  const ruleTemplates = readdirSync(join(CHART, 'templates')).filter((f) => /rule|alert/i.test(f));

  /** Checks a file's queries: it has some, they name metrics, and every metric is exported. */
  const expectExported = (exprs: string[]): void => {
    expect(exprs.length).toBeGreaterThan(0);
    const referenced = [...new Set(exprs.flatMap(metricsIn))];
    // A query the reader fails to parse would pass vacuously: each file must name metrics.
    expect(referenced.length).toBeGreaterThan(0);
    expect(referenced.filter((name) => !exported.has(name)).sort()).toEqual([]);
  };

  it('ships a dashboard for every service', () => {
    expect(SERVICE_NAMES.filter((service) => !existsSync(join(CHART, 'dashboards', `${service}.json`)))).toEqual([]);
    const uids = dashboards.map((f) => (JSON.parse(readFileSync(join(CHART, 'dashboards', f), 'utf8')) as { uid: string }).uid);
    expect(new Set(uids).size).toBe(uids.length);
  });

  it.each(dashboards)('dashboards/%s queries only exported metrics', (file) => {
    expectExported(exprsOf(JSON.parse(readFileSync(join(CHART, 'dashboards', file), 'utf8'))));
  });

  it('ships an alert rule template', () => {
    expect(ruleTemplates).toContain('prometheusrule.yaml');
  });

  it.each(ruleTemplates)('templates/%s alerts only on exported metrics (rendered enabled)', async (file) => {
    const helm = new Helm();
    try {
      const result = await helm.exec(['template', 'rel', CHART, '--namespace', 'sightline', '--show-only', `templates/${file}`], ['distributed'], [{ prometheusRule: { enabled: true } }]);
      expect(result.stderr).toBe('');
      const rules = parseAllDocuments(result.stdout)
        .map((doc) => doc.toJSON() as { kind?: string; spec?: { groups?: { rules?: { expr?: unknown }[] }[] } } | null)
        .filter((object) => object?.kind === 'PrometheusRule')
        .flatMap((object) => object?.spec?.groups ?? [])
        .flatMap((group) => group.rules ?? []);
      expectExported(rules.map((rule) => String(rule.expr)));
    } finally {
      helm.dispose();
    }
  });
});
