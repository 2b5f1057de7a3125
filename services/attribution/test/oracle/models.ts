// The rule models as the design states them (the five, and last_non_direct): each gives one weight per touch of a
// journey (oldest first), and the weights of a journey with touches sum to 1.
import { HALF_LIFE_MS, type RuleModel } from './types';

/** `channels`: each touch's channel, which last_non_direct reads (Direct is the channel it skips). */
export function modelWeights(model: RuleModel, touchStartsMs: readonly number[], conversionMs: number, channels: readonly string[] = []): number[] {
  const n = touchStartsMs.length;
  if (n === 0) return [];
  switch (model) {
    case 'last_non_direct': {
      let pick = n - 1;
      for (let i = n - 1; i >= 0; i--) if (channels[i] !== 'Direct') { pick = i; break; }
      return touchStartsMs.map((_, i) => (i === pick ? 1 : 0));
    }
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
