/**
 * Quota store benchmarks: the per-request cost of `SqliteWindowStore` (one SQLite file per token,
 * shared by every process of the machine) against `MemoryWindowStore` (in process), measured in
 * the same run:
 *
 * 1. Store operations per request, as the scheduler makes them for one /kline request on
 *    professional at its full rate (20 a second: every rule's log as full as the plan lets it
 *    get, the per-minute one holding 1,200 starts): `earliestStart`, `tryAcquire` (check and
 *    record), `settle`. Virtual time (one request every 55 ms), so nothing waits; interleaved
 *    rounds, median.
 * 2. A real `PlanScheduler` on the real clock, professional, a backfill that always has a request
 *    waiting, for 6 s per store: requests started and CPU time per request (the scheduler's whole
 *    work, store included).
 * 3. Four processes on one database file, each taking starts of a 2-per-20-ms window as fast as it
 *    can for 1 s: transactions per second across processes (contention on the write lock).
 *
 * Run: `pnpm bench quota` (builds first; this file imports the built package).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanScheduler, planLimits, type WindowSpec, type WindowStore } from '@quoteflow/core';
import { MemoryWindowStore, SqliteWindowStore } from '@quoteflow/core/internal';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const dir = mkdtempSync(join(tmpdir(), 'qf-quota-bench-'));

// --- 1. store operations per request ---------------------------------------------------------
const T0 = Date.UTC(2026, 0, 5, 4);
const STEP_MS = 55;
/** What one /kline start on professional is checked against (PlanWindows' specs, margin 25 ms). */
const SPECS: readonly WindowSpec[] = [
  { kind: 'sliding', key: 'rule:combined', windowMs: 1_025, limit: 20, anchor: 'settle' },
  { kind: 'sliding', key: 'rule:combined:spacing', windowMs: 26, limit: 1 },
  { kind: 'sliding', key: 'rule:per-minute', windowMs: 60_025, limit: 1_200, anchor: 'settle' },
  { kind: 'sliding', key: 'rule:per-minute:spacing', windowMs: 26, limit: 1 },
  { kind: 'sliding', key: 'rule:kline-rate', windowMs: 1_025, limit: 20, anchor: 'settle' },
  { kind: 'sliding', key: 'rule:kline-rate:spacing', windowMs: 26, limit: 1 },
  { kind: 'bucket', key: `day:${T0 - (T0 % 86_400_000)}`, limit: 1_728_000, endsAtMs: T0 + 86_400_000 },
  { kind: 'rolling', key: 'rolling-day', windowMs: 86_475_025, limit: 1_728_000, slotMs: 60_000 },
];
const specsAt = (nowMs: number): WindowSpec[] =>
  SPECS.filter((s) => s.kind !== 'bucket' || nowMs < s.endsAtMs);

/** A store driven on virtual time: each call is one request `STEP_MS` after the previous one. */
function driver(store: MemoryWindowStore | SqliteWindowStore, clock: { nowMs: number }): () => void {
  return () => {
    clock.nowMs += STEP_MS;
    const specs = specsAt(clock.nowMs);
    store.earliestStart(specs, clock.nowMs);
    const got = store.tryAcquire(specs, clock.nowMs);
    if (!got.acquired) throw new Error(`bench: refused at ${clock.nowMs - T0} ms (the step is too short)`);
    store.settle(got.ticket, clock.nowMs + 20);
  };
}

const memoryClock = { nowMs: T0 };
const sqliteClock = { nowMs: T0 };
const sqlite = new SqliteWindowStore({
  token: 'bench-ops',
  stateDir: dir,
  time: { clockMs: () => sqliteClock.nowMs, monotonicMs: () => sqliteClock.nowMs, bootId: () => 'bench' },
});
const ops: [string, () => void][] = [
  ['MemoryWindowStore (baseline)', driver(new MemoryWindowStore(), memoryClock)],
  ['SqliteWindowStore', driver(sqlite, sqliteClock)],
];
// Warm-up past one minute of virtual time, so the per-minute log is as full as the plan allows.
for (const [, fn] of ops) for (let i = 0; i < 1_300; i++) fn();
const samples = ops.map(() => [] as number[]);
for (let round = 0; round < 9; round++) {
  for (let c = 0; c < ops.length; c++) {
    gc();
    const t = process.hrtime.bigint();
    for (let i = 0; i < 1_000; i++) ops[c]![1]();
    samples[c]!.push(Number(process.hrtime.bigint() - t) / 1e3 / 1_000);
  }
}
const perRequestUs = samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)]!);
const fileKb = statSync(sqlite.path).size / 1024;
sqlite.close();

// --- 2. a real scheduler at the plan's full rate -----------------------------------------------
async function schedulerRun(store: WindowStore): Promise<{ started: number; cpuUsPerRequest: number }> {
  const scheduler = new PlanScheduler(planLimits('professional'), { store });
  let started = 0;
  let stop = false;
  const source = async (): Promise<void> => {
    while (!stop) {
      await scheduler
        .schedule({ endpoint: 'kline', priority: 'backfill' }, async () => {
          started++;
          await new Promise((resolve) => setTimeout(resolve, 30)); // a 30 ms answer
        })
        .catch(() => undefined);
    }
  };
  gc();
  const cpu = process.cpuUsage();
  const sources = Array.from({ length: 40 }, source);
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  stop = true;
  const used = process.cpuUsage(cpu);
  await scheduler.close();
  await Promise.all(sources);
  return { started, cpuUsPerRequest: (used.user + used.system) / started };
}
const realMemory = await schedulerRun(new MemoryWindowStore());
const realStore = new SqliteWindowStore({ token: 'bench-real', stateDir: dir });
const realSqlite = await schedulerRun(realStore);
realStore.close();

// --- 3. four processes contending for one file -------------------------------------------------
const worker = join(dir, 'contend.mjs');
writeFileSync(
  worker,
  `import { SqliteWindowStore } from ${JSON.stringify(import.meta.resolve('@quoteflow/core'))};
const store = new SqliteWindowStore({ token: 'bench-contend', stateDir: process.argv[2] });
const spec = { kind: 'sliding', key: 'race', windowMs: 20, limit: 2, anchor: 'start' };
const end = Date.now() + 1000; let calls = 0; const got = [];
while (Date.now() < end) { calls++; if (store.tryAcquire([spec], Date.now()).acquired) got.push(Date.now()); }
store.close(); console.log(JSON.stringify({ calls, got }));`,
);
const results = await Promise.all(
  Array.from(
    { length: 4 },
    () =>
      new Promise<{ calls: number; got: number[] }>((resolve, reject) =>
        execFile(process.execPath, [worker, dir], (error, stdout) =>
          error === null ? resolve(JSON.parse(stdout) as { calls: number; got: number[] }) : reject(error),
        ),
      ),
  ),
);
rmSync(dir, { recursive: true, force: true });

console.log(
  `node ${process.version}; SQLite via node:sqlite, WAL, synchronous=NORMAL; load average ${loadavg()[0]!.toFixed(1)}\n`,
);
console.log('### Store operations per request (professional, full rate, virtual time)\n');
console.log('| store | earliestStart + tryAcquire + settle, per request (µs) | vs memory |');
console.log('|---|---:|---:|');
ops.forEach(([name], i) =>
  console.log(
    `| ${name} | ${perRequestUs[i]!.toFixed(1)} | ${(perRequestUs[i]! / perRequestUs[0]!).toFixed(1)}x |`,
  ),
);
console.log(
  `\nDatabase file after ${(1_300 + 9_000).toLocaleString('en')} requests: ${fileKb.toFixed(0)} KiB (old rows pruned).\n`,
);
console.log('### PlanScheduler on the real clock, professional, 6 s of backfill per store\n');
console.log('| store | requests started | CPU per request (µs) |');
console.log('|---|---:|---:|');
console.log(
  `| MemoryWindowStore (baseline) | ${realMemory.started} | ${realMemory.cpuUsPerRequest.toFixed(0)} |`,
);
console.log(`| SqliteWindowStore | ${realSqlite.started} | ${realSqlite.cpuUsPerRequest.toFixed(0)} |`);
console.log('\n### Four processes on one file, tryAcquire as fast as each can for 1 s\n');
const calls = results.reduce((n, r) => n + r.calls, 0);
const granted = results.flatMap((r) => r.got).sort((a, b) => a - b);
const spanS = (granted.at(-1)! - granted[0]!) / 1_000;
console.log(
  `${calls.toLocaleString('en')} transactions across 4 processes (${results.map((r) => r.calls).join(', ')}); ` +
    `${granted.length} starts granted over ${spanS.toFixed(2)} s, ${(granted.length / spanS).toFixed(0)} a second ` +
    `(the window allows 100 a second); per process ${results.map((r) => r.got.length).join(', ')}.`,
);
