/**
 * How fresh a cluster keeps a universe: three `klineSync` workers sharing one token through Redis
 * (whole `/batch-kline` requests each, as `quoteflow sync --redis` divides them), one of them
 * killed with SIGKILL midway, against one client (the in-process scheduler, no Redis) polling the
 * same universe on a token of its own at the same time, against the same simulator, at real speed.
 * A series' poll gap is the time between two `/batch-kline` requests that carry it, at the
 * simulator (its request log names each request's series). The takeover (a dead worker's series,
 * from the kill to their first request after it) is measured apart and left out of the gaps.
 *
 * Needs `redis-server` (scripts/redis/setup.sh) or REDIS_URL. Run: `pnpm bench cluster-freshness`
 * (BENCH_FRESHNESS_SERIES=24,10000 by default; BENCH_FRESHNESS_DEBUG=1 lists on stderr the gaps
 * over 25 s, by series dead or not and by time from the kill, and each worker's assignments).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchKlineUnits } from '@quoteflow/cluster';
import { planLimits, type KlineType, type Plan } from '@quoteflow/core';
import { startSimulator, syntheticCatalogue, type Simulator } from '@quoteflow/simulator';
import { tokenLabel } from '@quoteflow/simulator/internal';
import { testRedis } from '../../../test/support/redis-server.js';
import { spawnWorker, type BenchWorker } from './spawn-worker.js';

const SYNC_WORKER = fileURLToPath(new URL('../../../test/support/redis-sync-worker.ts', import.meta.url));

interface Universe {
  readonly name: string;
  readonly plan: Plan;
  readonly codes: number;
  readonly klineTypes: readonly KlineType[];
  /** Steady polls measured before the kill and after it, in s. */
  readonly beforeKillS: number;
  readonly afterKillS: number;
}

/** 24 series as the issue ran them (one request on premium); 10,000 on professional (20 requests). */
const UNIVERSES: Record<string, Universe> = {
  '24': {
    name: '24 series',
    plan: 'premium',
    codes: 12,
    klineTypes: [1, 2],
    beforeKillS: 20,
    afterKillS: 20,
  },
  '10000': {
    name: '10,000 series',
    plan: 'professional',
    codes: 10_000,
    klineTypes: [1],
    beforeKillS: 80,
    afterKillS: 100,
  },
};

const spawnSync = (env: Record<string, string>): BenchWorker => spawnWorker(SYNC_WORKER, env);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench: ${what} not within ${timeoutMs} ms`);
    await sleep(1_000);
  }
}

/** Arrival times of the `/batch-kline` requests of `label` that carried each series, in order. */
function pollsBySeries(sim: Simulator, label: string, fromMs: number, toMs: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of sim.log.filter({ token: label, endpoint: 'batch-kline', sinceMs: fromMs })) {
    if (e.arrivalMs > toMs || e.refusedBy !== undefined) continue;
    for (const s of e.series) {
      let list = out.get(s);
      if (list === undefined) out.set(s, (list = []));
      list.push(e.arrivalMs);
    }
  }
  return out;
}

const pct = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function measure(redisUrl: string, u: Universe) {
  const products = syntheticCatalogue({ count: u.codes, classes: ['crypto'] });
  const codes = products.map((p) => p.code);
  const sim = await startSimulator({ tokens: {}, products, historyDays: 1, seed: 3 });
  const clusterToken = `bench-fresh-${randomUUID()}`;
  const oneToken = `bench-fresh-one-${randomUUID()}`;
  sim.setToken(clusterToken, u.plan);
  sim.setToken(oneToken, u.plan);
  const [dir, oneDir] = await Promise.all([1, 2].map(() => mkdtemp(join(tmpdir(), 'qf-bench-fresh-'))));
  const common = {
    QF_TEST_PLAN: u.plan,
    QF_TEST_BASE_URL: sim.url,
    QF_TEST_CODES: codes.join(','),
    QF_TEST_KLINE_TYPES: u.klineTypes.join(','),
    QF_TEST_BARS: '0', // no history: 10,000 first reads would take minutes of the plan's /kline rate
    QF_TEST_COMMIT_MS: '5000',
    QF_TEST_HEARTBEAT_MS: '1000',
    QF_TEST_GROUP: 'fresh',
    QF_TEST_PREFIX: `f${randomUUID().slice(0, 8)}`,
  };
  const one = spawnSync({
    ...common,
    QF_TEST_TOKEN: oneToken,
    QF_TEST_REDIS_URL: '',
    QF_TEST_WORKER_ID: 'one',
    QF_TEST_OUT: oneDir!,
  });
  const workers = ['w1', 'w2', 'w3'].map((id) =>
    spawnSync({
      ...common,
      QF_TEST_TOKEN: clusterToken,
      QF_TEST_REDIS_URL: redisUrl,
      QF_TEST_WORKER_ID: id,
      QF_TEST_OUT: dir!,
    }),
  );
  const label = tokenLabel(clusterToken, u.plan);
  const oneLabel = tokenLabel(oneToken, u.plan);
  const series = codes.flatMap((c) => u.klineTypes.map((k) => `${c}:${k}`));
  const held = (p: BenchWorker): string[] =>
    ([...p.lines].reverse().find((l) => l.type === 'assignment')?.held as string[] | undefined) ?? [];
  try {
    // Warm: both poll every series (twice, so that a whole poll cycle lies behind). Counted as the
    // requests come, once a second: the simulator shares this process's event loop.
    const seen = new Map<string, number>();
    let cursor = 0;
    await until(
      () => {
        const all = sim.log.entries();
        for (const e of all.slice(cursor))
          if (e.endpoint === 'batch-kline' && (e.token === label || e.token === oneLabel))
            for (const s of e.series) seen.set(`${e.token} ${s}`, (seen.get(`${e.token} ${s}`) ?? 0) + 1);
        cursor = all.length;
        return [label, oneLabel].every((l) => series.every((s) => (seen.get(`${l} ${s}`) ?? 0) >= 2));
      },
      300_000,
      'every series polled twice by both',
    );
    const steadyFrom = Date.now();
    await sleep(u.beforeKillS * 1_000);
    // The worker holding most series dies (with one request, the one holding it).
    const victim = [...workers].sort((a, b) => held(b).length - held(a).length)[0]!;
    const deadSeries = new Set(held(victim).flatMap((c) => u.klineTypes.map((k) => `${c}:${k}`)));
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await sleep(u.afterKillS * 1_000);
    const stoppedAt = Date.now();
    for (const p of [one, ...workers]) p.child.kill('SIGTERM');
    await Promise.all([one, ...workers].map((p) => p.exited));

    const clusterPolls = pollsBySeries(sim, label, steadyFrom, stoppedAt);
    const onePolls = pollsBySeries(sim, oneLabel, steadyFrom, stoppedAt);
    const gaps = (polls: Map<string, number[]>, skipDeadAcrossKill: boolean): number[] => {
      const out: number[] = [];
      for (const [s, at] of polls)
        for (let i = 1; i < at.length; i++)
          if (!(skipDeadAcrossKill && deadSeries.has(s) && at[i - 1]! < killedAt && killedAt <= at[i]!))
            out.push(at[i]! - at[i - 1]!);
      return out.sort((a, b) => a - b);
    };
    if (process.env['BENCH_FRESHNESS_DEBUG'] === '1') {
      const big: string[] = [];
      for (const [s, at] of clusterPolls)
        for (let i = 1; i < at.length; i++)
          if (at[i]! - at[i - 1]! > 25_000)
            big.push(`${deadSeries.has(s) ? 'dead' : 'own'} ${at[i - 1]! - killedAt}..${at[i]! - killedAt}`);
      const counts = new Map<string, number>();
      for (const b of big) counts.set(b, (counts.get(b) ?? 0) + 1);
      console.error([...counts].map(([k, n]) => `${n}x ${k}`).join('\n'));
      console.error(
        workers
          .map((w) =>
            w.lines
              .filter((l) => l.type === 'assignment')
              .map((l) => `${Number(l.atMs) - killedAt}:${(l.held as string[]).length}`)
              .join(' '),
          )
          .join('\n'),
      );
    }
    const takeover = [...deadSeries]
      .map((s) => (clusterPolls.get(s) ?? []).find((t) => t >= killedAt))
      .map((t) => (t === undefined ? Number.POSITIVE_INFINITY : t - killedAt))
      .sort((a, b) => a - b);
    const units = batchKlineUnits(codes, u.klineTypes, planLimits(u.plan)).length;
    return {
      units,
      cluster: gaps(clusterPolls, true),
      one: gaps(onePolls, false),
      takeover,
      dead: deadSeries.size,
      refused: sim.log.refused().length,
      requests: {
        cluster: sim.log.count({ token: label, endpoint: 'batch-kline', sinceMs: steadyFrom }),
        one: sim.log.count({ token: oneLabel, endpoint: 'batch-kline', sinceMs: steadyFrom }),
      },
      seconds: Math.round((stoppedAt - steadyFrom) / 1000),
    };
  } finally {
    for (const p of [one, ...workers])
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await sim.close();
    await Promise.all([dir, oneDir].map((d) => rm(d!, { recursive: true, force: true })));
  }
}

const redis = await testRedis();
try {
  const picked = (process.env['BENCH_FRESHNESS_SERIES'] ?? '24,10000').split(',');
  console.log(
    'Three workers (one killed with SIGKILL midway) against one client on the same universe, same simulator, same time, real speed; gaps between the /batch-kline requests carrying a series, at the simulator; a dead worker\'s series from the kill to their first request after it ("takeover"), left out of the gaps.\n',
  );
  console.log(
    '| universe | plan | requests per poll | measured | /batch-kline sent (cluster / one client) | gap p50 cluster / one | gap p99 cluster / one | p99 ratio | takeover: dead series polled again (median / max) | refused |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const key of picked) {
    const u = UNIVERSES[key];
    if (u === undefined)
      throw new Error(`bench: no universe ${key}; one of ${Object.keys(UNIVERSES).join(', ')}`);
    const r = await measure(redis.url, u);
    console.log(
      `| ${u.name} | ${u.plan} | ${r.units} | ${r.seconds} s | ${r.requests.cluster} / ${r.requests.one} | ${pct(r.cluster, 50)} / ${pct(r.one, 50)} ms | ${pct(r.cluster, 99)} / ${pct(r.one, 99)} ms | ${(pct(r.cluster, 99) / pct(r.one, 99)).toFixed(2)}x | ${pct(r.takeover, 50)} / ${r.takeover.at(-1)} ms (${r.dead} series) | ${r.refused} |`,
    );
  }
  console.log('');
} finally {
  await redis.close();
}
