import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Requests per minute of one endpoint: `[minuteStartSeconds, requests]`. */
export interface EndpointRate {
  readonly endpoint: string;
  readonly points: readonly (readonly [number, number])[];
}

/** What the quota view draws, from the request logs beside a dataset (`--request-log`). */
export interface QuotaData {
  readonly plan: string;
  /** The plan's requests per day and per minute (all endpoints): the lines drawn. */
  readonly perDay: number;
  readonly perMinute: number | undefined;
  readonly requests: number;
  /** Requests by outcome (`ok`, `QF_RATE_LIMITED`, …). */
  readonly outcomes: Readonly<Record<string, number>>;
  readonly perMinuteByEndpoint: readonly EndpointRate[];
  /** The daily budget left after each minute, counting the last 24 hours: `[seconds, left]`. */
  readonly budgetLeft: readonly (readonly [number, number])[];
}

interface PlanLine {
  type: 'plan';
  plan: string;
  per_day: number;
  rules: { id: string; scope: string; window_ms: number; limit: number }[];
}
interface RequestLine {
  type: 'request';
  sent: string;
  endpoint: string;
  outcome: string;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * Reads every request log under `DIR/_requests/` (all processes that logged beside this dataset),
 * or `undefined` when there is none.
 */
export async function readQuotaData(dir: string): Promise<QuotaData | undefined> {
  const logDir = join(dir, '_requests');
  const names = await readdir(logDir).catch(() => [] as string[]);
  let plan: PlanLine | undefined;
  const sent: { ms: number; endpoint: string; outcome: string }[] = [];
  for (const name of names.filter((n) => n.endsWith('.ndjson')).sort()) {
    for (const line of (await readFile(join(logDir, name), 'utf8')).split('\n')) {
      if (line.trim() === '') continue;
      let value: PlanLine | RequestLine;
      try {
        value = JSON.parse(line) as PlanLine | RequestLine;
      } catch {
        continue; // a line cut short by a crash
      }
      if (value.type === 'plan') plan ??= value;
      else if (value.type === 'request')
        sent.push({ ms: Date.parse(value.sent), endpoint: value.endpoint, outcome: value.outcome });
    }
  }
  if (plan === undefined) return undefined;
  sent.sort((a, b) => a.ms - b.ms);
  const outcomes: Record<string, number> = {};
  const byEndpoint = new Map<string, Map<number, number>>();
  for (const r of sent) {
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    const minute = Math.floor(r.ms / MINUTE_MS) * MINUTE_MS;
    let counts = byEndpoint.get(r.endpoint);
    if (counts === undefined) byEndpoint.set(r.endpoint, (counts = new Map()));
    counts.set(minute, (counts.get(minute) ?? 0) + 1);
  }
  const budgetLeft: [number, number][] = [];
  let from = 0;
  for (let i = 0; i < sent.length; i++) {
    const minute = Math.floor(sent[i]!.ms / MINUTE_MS) * MINUTE_MS;
    if (i + 1 < sent.length && Math.floor(sent[i + 1]!.ms / MINUTE_MS) * MINUTE_MS === minute) continue;
    while (sent[from]!.ms <= sent[i]!.ms - DAY_MS) from++;
    budgetLeft.push([minute / 1000, plan.per_day - (i + 1 - from)]);
  }
  return {
    plan: plan.plan,
    perDay: plan.per_day,
    perMinute: plan.rules.find((r) => r.scope === 'all' && r.window_ms === MINUTE_MS)?.limit,
    requests: sent.length,
    outcomes,
    perMinuteByEndpoint: [...byEndpoint].map(([endpoint, counts]) => ({
      endpoint,
      points: [...counts].sort((a, b) => a[0] - b[0]).map(([m, n]) => [m / 1000, n] as const),
    })),
    budgetLeft,
  };
}
