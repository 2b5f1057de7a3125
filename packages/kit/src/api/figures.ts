// Numbers as answers carry them. Sums of fractional credit pick up binary float noise
// (24.000000000000004) that depends on the order rows were added, so the same data answered after a
// rebuild could differ byte for byte. Twelve significant digits keep far more precision than any
// figure means (relative 1e-12) and drop the noise.
export const FIGURE_SIGNIFICANT_DIGITS = 12;

export function settleFigure(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(FIGURE_SIGNIFICANT_DIGITS));
}

export function settleFigureOrNull(value: number | null): number | null {
  return value === null ? null : settleFigure(value);
}
