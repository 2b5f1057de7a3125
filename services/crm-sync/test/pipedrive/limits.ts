// Pipedrive's rate limits: the per-token burst window (x-ratelimit-* headers), the daily write
// allowance of API tokens (x-daily-requests-left) and the company's daily token budget, which
// resets at midnight UTC. server.ts's request handler spends from these.
import { PipedriveCompany } from './company';
import { DAILY_WRITES, type FakePipedriveOptions } from './types';

export class PipedriveLimits extends PipedriveCompany {
  private readonly burst: { limit: number; windowMs: number };
  private readonly windows = new Map<string, { start: number; count: number }>();
  protected budget: { day: string; left: number };
  private writesLeft = new Map<string, { day: string; left: number }>();
  private readonly dailyBudget: number;

  constructor(options: FakePipedriveOptions) {
    super(options);
    this.burst = options.burst ?? { limit: 80, windowMs: 2000 };
    this.dailyBudget = options.dailyBudget ?? 1_000_000;
    this.budget = { day: this.day(), left: this.dailyBudget };
  }

  /** Tokens left in today's budget. */
  budgetLeft(): number {
    this.rollBudget();
    return this.budget.left;
  }

  /** Spends today's budget down to `left` tokens. */
  setBudgetLeft(left: number): void {
    this.rollBudget();
    this.budget.left = left;
  }

  /** Counts the request in its token's window; remaining below 0 means over the limit. */
  protected burstHeaders(token: string): Record<string, string> {
    const now = Date.now();
    let w = this.windows.get(token);
    if (!w || now - w.start >= this.burst.windowMs) this.windows.set(token, (w = { start: now, count: 0 }));
    w.count++;
    return {
      'x-ratelimit-limit': String(this.burst.limit),
      'x-ratelimit-remaining': String(this.burst.limit - w.count),
      'x-ratelimit-reset': String(Math.max(1, Math.ceil((w.start + this.burst.windowMs - now) / 1000))),
    };
  }

  protected spendWrite(token: string): number {
    let w = this.writesLeft.get(token);
    if (!w || w.day !== this.day()) this.writesLeft.set(token, (w = { day: this.day(), left: DAILY_WRITES }));
    w.left = Math.max(0, w.left - 1);
    return w.left;
  }

  private day(): string {
    return new Date(this.now()).toISOString().slice(0, 10);
  }

  protected nextMidnight(): number {
    return Date.parse(`${this.day()}T00:00:00Z`) + 86_400_000;
  }

  protected rollBudget(): void {
    if (this.budget.day !== this.day()) this.budget = { day: this.day(), left: this.dailyBudget };
  }
}
