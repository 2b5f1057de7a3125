import { settleFigure, settleFigureOrNull } from './figures';

describe('settleFigure', () => {
  it('drops float noise of sums', () => {
    expect(settleFigure(24.000000000000004)).toBe(24);
    expect(settleFigure(0.1 + 0.2)).toBe(0.3);
  });

  it('answers the same bytes whatever order the parts were added in', () => {
    const parts = Array.from({ length: 200 }, (_, i) => 1 / (i + 3));
    const forward = parts.reduce((a, b) => a + b, 0);
    const backward = [...parts].reverse().reduce((a, b) => a + b, 0);
    expect(forward).not.toBe(backward);
    expect(JSON.stringify(settleFigure(forward))).toBe(JSON.stringify(settleFigure(backward)));
  });

  it('keeps twelve significant digits, large and small, and leaves zero, negatives and null alone', () => {
    expect(settleFigure(123456789.123456789)).toBe(123456789.123);
    expect(settleFigure(0.000123456789012345)).toBe(0.000123456789012);
    expect(settleFigure(-2.5000000000000004)).toBe(-2.5);
    expect(settleFigure(0)).toBe(0);
    expect(settleFigure(1e21)).toBe(1e21);
    expect(settleFigureOrNull(null)).toBeNull();
  });
});
