// Meta's X-Business-Use-Case-Usage header, read the same way by spend pulls (insights) and
// conversion uploads (CAPI): {"<business id>": [{"call_count": %, "total_cputime": %, "total_time": %,
// "estimated_time_to_regain_access": minutes}, ...]}.
import { num } from './spend/spend.types';

interface UsageEntry {
  call_count?: number;
  total_cputime?: number;
  total_time?: number;
  estimated_time_to_regain_access?: number;
}

/** The highest usage percentage and the longest wait (ms) x-business-use-case-usage states. */
export function businessUsage(headers: Headers): { percent: number; regainMs: number } {
  const raw = headers.get('x-business-use-case-usage');
  let percent = 0;
  let regainMs = 0;
  if (!raw) return { percent, regainMs };
  try {
    const parsed = JSON.parse(raw) as Record<string, UsageEntry[]>;
    for (const entries of Object.values(parsed)) {
      for (const e of entries ?? []) {
        percent = Math.max(percent, num(e.call_count), num(e.total_cputime), num(e.total_time));
        regainMs = Math.max(regainMs, num(e.estimated_time_to_regain_access) * 60_000);
      }
    }
  } catch {
    // An unreadable header states nothing.
  }
  return { percent, regainMs };
}
