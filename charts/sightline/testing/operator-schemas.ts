// The operators' CRDs are not part of the Kubernetes schemas, and their full OpenAPI schemas are
// not vendored here. These JSON Schemas pin down exactly the fields this chart renders for each
// custom resource (names and types as the operators document them), with additionalProperties
// false, so a misspelt or misplaced field fails the test. Core types embedded in a custom resource
// (a pod spec, a claim spec, resource requirements) are validated separately against the
// Kubernetes schemas by wrapping them in a core object (see coreObjectsInside).
const str = { type: 'string', minLength: 1 } as const;
const name = { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 } as const;
const quantity = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$' } as const;
const resources = { type: 'object' } as const; // checked as core ResourceRequirements, see below

function customResource(apiVersion: string, kind: string, spec: object): object {
  return {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    additionalProperties: false,
    properties: {
      apiVersion: { const: apiVersion },
      kind: { const: kind },
      metadata: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name, labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 63 } } },
      },
      spec,
    },
  };
}

/** CloudNativePG `Cluster` (postgresql.cnpg.io/v1). */
const cnpgCluster = customResource('postgresql.cnpg.io/v1', 'Cluster', {
  type: 'object',
  required: ['instances', 'storage', 'bootstrap'],
  additionalProperties: false,
  properties: {
    instances: { type: 'integer', minimum: 1 },
    imageName: str,
    bootstrap: {
      type: 'object',
      additionalProperties: false,
      required: ['initdb'],
      properties: {
        initdb: { type: 'object', additionalProperties: false, required: ['database', 'owner'], properties: { database: str, owner: str } },
      },
    },
    storage: { type: 'object', additionalProperties: false, required: ['size'], properties: { size: quantity, storageClass: str } },
    resources,
  },
});

/** RabbitMQ cluster operator `RabbitmqCluster` (rabbitmq.com/v1beta1). */
const rabbitmqCluster = customResource('rabbitmq.com/v1beta1', 'RabbitmqCluster', {
  type: 'object',
  required: ['replicas'],
  additionalProperties: false,
  properties: {
    replicas: { type: 'integer', minimum: 1 },
    image: str,
    persistence: { type: 'object', additionalProperties: false, properties: { storage: quantity, storageClassName: str } },
    resources,
  },
});

/** Altinity `ClickHouseInstallation` (clickhouse.altinity.com/v1). */
const clickhouseInstallation = customResource('clickhouse.altinity.com/v1', 'ClickHouseInstallation', {
  type: 'object',
  required: ['configuration', 'templates', 'defaults'],
  additionalProperties: false,
  properties: {
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: {
        templates: { type: 'object', additionalProperties: false, properties: { podTemplate: str, dataVolumeClaimTemplate: str } },
      },
    },
    configuration: {
      type: 'object',
      additionalProperties: false,
      required: ['users', 'clusters'],
      properties: {
        users: {
          type: 'object',
          // <user>/<setting>, with the settings this chart uses.
          propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*/(password|networks/ip|profile|quota)$' },
          additionalProperties: {
            anyOf: [
              str,
              { type: 'array', items: str, minItems: 1 },
              {
                type: 'object',
                additionalProperties: false,
                required: ['valueFrom'],
                properties: {
                  valueFrom: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['secretKeyRef'],
                    properties: {
                      secretKeyRef: { type: 'object', additionalProperties: false, required: ['name', 'key'], properties: { name, key: str } },
                    },
                  },
                },
              },
            ],
          },
        },
        clusters: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'layout'],
            properties: {
              name,
              layout: {
                type: 'object',
                additionalProperties: false,
                properties: { shardsCount: { type: 'integer', minimum: 1 }, replicasCount: { type: 'integer', minimum: 1 } },
              },
            },
          },
        },
      },
    },
    templates: {
      type: 'object',
      additionalProperties: false,
      properties: {
        podTemplates: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['name', 'spec'], properties: { name: str, spec: { type: 'object' } } },
        },
        volumeClaimTemplates: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['name', 'spec'], properties: { name: str, spec: { type: 'object' } } },
        },
      },
    },
  },
});

export const OPERATOR_SCHEMAS: Record<string, object> = {
  'postgresql.cnpg.io/v1/Cluster': cnpgCluster,
  'rabbitmq.com/v1beta1/RabbitmqCluster': rabbitmqCluster,
  'clickhouse.altinity.com/v1/ClickHouseInstallation': clickhouseInstallation,
};

type Obj = Record<string, unknown>;

/**
 * The core objects embedded in an operator's custom resource, wrapped so the Kubernetes schemas can
 * check them: a pod template's spec as a Pod, a claim template's spec as a PersistentVolumeClaim,
 * resource requirements as a container's resources.
 */
export function coreObjectsInside(resource: Obj): Obj[] {
  const spec = (resource['spec'] ?? {}) as Obj;
  const base = String((resource['metadata'] as Obj | undefined)?.['name'] ?? 'unnamed');
  const out: Obj[] = [];
  if (spec['resources'] !== undefined) {
    out.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${base}-resources` },
      spec: { containers: [{ name: 'resources', image: 'placeholder', resources: spec['resources'] }] },
    });
  }
  const templates = (spec['templates'] ?? {}) as { podTemplates?: Obj[]; volumeClaimTemplates?: Obj[] };
  for (const template of templates.podTemplates ?? []) {
    out.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${base}-${String(template['name'])}` }, spec: template['spec'] });
  }
  for (const template of templates.volumeClaimTemplates ?? []) {
    out.push({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${base}-${String(template['name'])}` }, spec: template['spec'] });
  }
  return out;
}
