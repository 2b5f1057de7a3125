// The compiler reads the same registry GET /schema serves: every metric has a computation and every
// groupable or filterable dimension compiles to SQL in at least one place, so /schema never lists
// something /metrics cannot answer.
import { DIMENSIONS, METRICS } from '@sightline/proto-schemas';
import { dimensionSql } from './dimensions';
import { METRIC_FAMILY } from './families';

describe('/metrics compiler and the registry', () => {
  it.each(METRICS.map((m) => m.name))('metric %s has a computation', (name) => {
    expect(METRIC_FAMILY[name]).toBeDefined();
  });

  it.each(DIMENSIONS.filter((d) => d.name !== 'cohort').map((d) => d.name))('dimension %s compiles in at least one place', (name) => {
    const places = (['traffic', 'credit', 'customer'] as const).filter((p) => dimensionSql(name, p) !== null);
    expect(places.length).toBeGreaterThan(0);
  });
});
