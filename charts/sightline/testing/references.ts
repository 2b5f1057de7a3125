// Checks that the objects of one render point at each other correctly: what Kubernetes would only
// report at run time (a Secret key that is not there, a Service selecting no pod, a $(VAR) used
// before it is defined).
import type { K8sObject } from './helm';

type Obj = Record<string, unknown>;
type Container = {
  name: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
};
type PodSpec = { containers: Container[]; serviceAccountName?: string; volumes?: { persistentVolumeClaim?: { claimName: string } }[] };

/** Secrets that exist outside the render, by name, with the keys the chart may read from them. */
export type ExternalSecrets = Record<string, string[]>;

function podTemplates(objects: K8sObject[]): { owner: string; labels: Record<string, string>; spec: PodSpec }[] {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
    .map((o) => {
      const template = (o.spec as Obj)['template'] as { metadata: { labels: Record<string, string> }; spec: PodSpec };
      return { owner: `${o.kind}/${o.metadata.name}`, labels: template.metadata.labels, spec: template.spec };
    });
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

function matchesSelector(selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }, labels: Record<string, string>): boolean {
  return (
    matches(selector.matchLabels, labels) &&
    (selector.matchExpressions ?? []).every((e) => {
      if (e.operator === 'In') return (e.values ?? []).includes(labels[e.key] ?? '');
      throw new Error(`references.ts does not handle selector operator ${e.operator}`);
    })
  );
}

/** Secrets an operator creates for a custom resource of this render, with their keys. */
function operatorSecrets(objects: K8sObject[]): ExternalSecrets {
  const out: ExternalSecrets = {};
  for (const o of objects) {
    if (o.kind === 'Cluster' && o.apiVersion === 'postgresql.cnpg.io/v1') out[`${o.metadata.name}-app`] = ['username', 'password', 'host', 'port', 'dbname', 'uri', 'jdbc-uri', 'pgpass'];
    if (o.kind === 'RabbitmqCluster') out[`${o.metadata.name}-default-user`] = ['username', 'password', 'host', 'port', 'default_user.conf'];
  }
  return out;
}

/** Every broken reference, as a sentence; empty when the render hangs together. */
export function brokenReferences(objects: K8sObject[], external: ExternalSecrets = {}): string[] {
  const problems: string[] = [];
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const secrets: ExternalSecrets = { ...external, ...operatorSecrets(objects) };
  for (const s of byKind('Secret')) secrets[s.metadata.name] = Object.keys(s.data ?? {});
  const configMaps = new Set(byKind('ConfigMap').map((c) => c.metadata.name));
  const pods = podTemplates(objects);

  for (const pod of pods) {
    for (const container of pod.spec.containers) {
      const defined = new Set<string>();
      for (const env of container.env ?? []) {
        const ref = env.valueFrom?.secretKeyRef;
        if (ref) {
          const keys = secrets[ref.name];
          if (!keys) problems.push(`${pod.owner}: ${env.name} reads Secret ${ref.name}, which nothing renders or provides`);
          else if (!keys.includes(ref.key)) problems.push(`${pod.owner}: ${env.name} reads key ${ref.key} of Secret ${ref.name}, which has only ${keys.join(', ')}`);
        }
        for (const [, variable] of (env.value ?? '').matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
          if (!defined.has(variable!)) problems.push(`${pod.owner}: ${env.name} uses $(${variable}) before it is defined`);
        }
        defined.add(env.name);
      }
      for (const from of container.envFrom ?? []) {
        if (from.configMapRef && !configMaps.has(from.configMapRef.name)) problems.push(`${pod.owner}: envFrom ConfigMap ${from.configMapRef.name} is not rendered`);
      }
    }
    const sa = pod.spec.serviceAccountName;
    if (sa && sa !== 'default' && !byKind('ServiceAccount').some((s) => s.metadata.name === sa)) problems.push(`${pod.owner}: ServiceAccount ${sa} is not rendered`);
    for (const volume of pod.spec.volumes ?? []) {
      const claim = volume.persistentVolumeClaim?.claimName;
      if (claim && !byKind('PersistentVolumeClaim').some((p) => p.metadata.name === claim)) problems.push(`${pod.owner}: PersistentVolumeClaim ${claim} is not rendered`);
    }
  }

  for (const service of byKind('Service')) {
    const spec = service.spec as { selector: Record<string, string>; ports: { name: string; targetPort: string | number }[] };
    const selected = pods.filter((p) => matches(spec.selector, p.labels));
    if (selected.length === 0) problems.push(`Service ${service.metadata.name} selects no pod`);
    for (const port of spec.ports) {
      if (typeof port.targetPort !== 'string') continue;
      for (const pod of selected) {
        if (!pod.spec.containers.some((c) => (c.ports ?? []).some((p) => p.name === port.targetPort))) problems.push(`Service ${service.metadata.name}: ${pod.owner} has no port named ${port.targetPort}`);
      }
    }
  }
  for (const ingress of byKind('Ingress')) {
    for (const rule of ((ingress.spec as Obj)['rules'] as { http: { paths: { backend: { service: { name: string; port: { name?: string } } } }[] } }[]) ?? []) {
      for (const path of rule.http.paths) {
        const target = byKind('Service').find((s) => s.metadata.name === path.backend.service.name);
        if (!target) problems.push(`Ingress ${ingress.metadata.name}: Service ${path.backend.service.name} is not rendered`);
        else if (!((target.spec as Obj)['ports'] as { name: string }[]).some((p) => p.name === path.backend.service.port.name)) problems.push(`Ingress ${ingress.metadata.name}: Service ${target.metadata.name} has no port ${path.backend.service.port.name}`);
      }
    }
  }
  for (const hpa of byKind('HorizontalPodAutoscaler')) {
    const ref = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
    if (!objects.some((o) => o.kind === ref.kind && o.metadata.name === ref.name)) problems.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: ${ref.kind} ${ref.name} is not rendered`);
  }
  for (const kind of ['PodDisruptionBudget', 'NetworkPolicy']) {
    for (const o of byKind(kind)) {
      const selector = (o.spec as Obj)[kind === 'NetworkPolicy' ? 'podSelector' : 'selector'] as Parameters<typeof matchesSelector>[0];
      if (!pods.some((p) => matchesSelector(selector, p.labels))) problems.push(`${kind} ${o.metadata.name} selects no pod`);
    }
  }
  for (const monitor of byKind('ServiceMonitor')) {
    const selector = (monitor.spec as { selector: Parameters<typeof matchesSelector>[0] }).selector;
    if (!byKind('Service').some((s) => matchesSelector(selector, s.metadata.labels ?? {}))) problems.push(`ServiceMonitor ${monitor.metadata.name} selects no Service`);
  }
  return problems;
}
