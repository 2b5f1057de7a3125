// The five attribution models as the design states them: each gives one weight per touch of a
// journey (oldest first), and the weights of a journey with touches sum to 1.
import { HALF_LIFE_MS, type AttributionModel } from './types';

export function modelWeights(model: AttributionModel, touchStartsMs: readonly number[], conversionMs: number): number[] {
  const n = touchStartsMs.length;
  if (n === 0) return [];
  switch (model) {
    case 'first_touch':
      return touchStartsMs.map((_, i) => (i === 0 ? 1 : 0));
    case 'last_touch':
      return touchStartsMs.map((_, i) => (i === n - 1 ? 1 : 0));
    case 'linear':
      return touchStartsMs.map(() => 1 / n);
    case 'u_shaped':
      if (n === 1) return [1];
      if (n === 2) return [0.5, 0.5];
      return touchStartsMs.map((_, i) => (i === 0 || i === n - 1 ? 0.4 : 0.2 / (n - 2)));
    case 'time_decay': {
      const raw = touchStartsMs.map((start) => 0.5 ** ((conversionMs - start) / HALF_LIFE_MS));
      const sum = raw.reduce((a, b) => a + b, 0);
      return raw.map((w) => w / sum);
    }
  }
}
