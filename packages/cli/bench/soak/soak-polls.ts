// How often the live polls really went out, per simulated day, from the simulator's own request
// log (soak-sim.ts writes it): the /batch-kline and /depth-tick requests and the median gap between
// two /batch-kline requests, against the planner's period. On a machine that cannot give the
// commands the CPU their plan's pace needs at the clock's speed, the gap grows, and freshness with it.
import { readFile } from 'node:fs/promises';
import { DAY_MS } from './soak-config.js';

export interface PollDay {
  readonly day: number;
  readonly batchKline: number;
  readonly depthTick: number;
  readonly kline: number;
  /** Median market ms between two consecutive /batch-kline requests. */
  readonly medianBatchGapMs: number;
}

/** Per simulated day of [startMs, startMs + days), the polls the simulator served. */
export async function pollsPerDay(requestLog: string, startMs: number, days: number): Promise<PollDay[]> {
  const byDay = Array.from({ length: days }, () => ({ batch: [] as number[], depth: 0, kline: 0 }));
  for (const line of (await readFile(requestLog, 'utf8')).split('\n')) {
    const [at, endpoint] = line.split('\t');
    const ms = Number(at);
    const day = Math.floor((ms - startMs) / DAY_MS);
    const bucket = byDay[day];
    if (bucket === undefined) continue;
    if (endpoint === 'batch-kline') bucket.batch.push(ms);
    else if (endpoint === 'depth-tick') bucket.depth++;
    else if (endpoint === 'kline') bucket.kline++;
  }
  return byDay.map((b, day) => {
    const gaps = b.batch
      .sort((x, y) => x - y)
      .slice(1)
      .map((ms, i) => ms - b.batch[i]!)
      .sort((x, y) => x - y);
    return {
      day,
      batchKline: b.batch.length,
      depthTick: b.depth,
      kline: b.kline,
      medianBatchGapMs: gaps[Math.floor(gaps.length / 2)] ?? Number.NaN,
    };
  });
}
