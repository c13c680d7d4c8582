// The week itself: the simulator and the three commands on one shared clock, a sample of every
// process every few simulated minutes, one kill -9 and restart of the sync per simulated day (at a
// seeded moment), the tables' figures at each day's end, then a stop with SIGTERM.
import { appendFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '@quoteflow/core';
import { DAY_MS, type SoakConfig } from './soak-config.js';
import type { SoakProcess, ProcessSample } from './soak-process.js';
import { settle, type Settled } from './soak-settle.js';
import { claimCommits, tableFigures, type TableFigures } from './soak-tables.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** Real time the end waits at most for the sync to catch up and commit (soak-settle.ts). */
const SETTLE_GIVE_UP_MS = 300_000;

/** The median of `xs` (NaN when empty). */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** One process's figures over one simulated day. */
export interface ProcessDay {
  samples: number;
  rssMaxBytes: number;
  heapMaxBytes: number;
  /** Descriptors and active handles at each sample (a child process of a compaction adds a few for a moment). */
  fds: number[];
  handles: number[];
  /** The highest of the day's event-loop delay p99s (each over one sample interval). */
  eventLoopP99MaxS: number;
  /** CPU seconds the process used that day (user + system). */
  cpuS: number;
}

/** A kill -9 of the sync and its restart. */
export interface SoakKill {
  readonly day: number;
  readonly atMs: number;
  /** The same instant on the machine's clock (claims in the Delta log carry real times). */
  readonly atRealMs: number;
  /** When the restarted sync said /ready (its backfill done), market ms. */
  readyAtMs: number | undefined;
  /**
   * When the restarted sync's first claim commit after the kill was made (the commit's own time,
   * real ms), read while the run goes on: the log's retention expires it within the real time
   * of a simulated hour, long before the week's end.
   */
  claimedAtRealMs: number | undefined;
}

export interface SoakRecord {
  readonly days: {
    processes: Record<string, ProcessDay>;
    tables: TableFigures[];
    /** The machine's 1-minute load averages at each sample (the other work on it included). */
    loads: number[];
  }[];
  readonly kills: SoakKill[];
  /** When the first start of the sync said /ready. */
  firstReadyAtMs: number | undefined;
  /** How the wait for the sync to catch up and commit before the SIGTERM went. */
  settle: Settled | undefined;
  /** When the final SIGTERM went out (market ms). */
  stoppedAtMs: number;
  /** Exit codes of the final SIGTERM, by process. */
  readonly stops: Record<string, number | null>;
  /** Real seconds the run took, and the sim clock's market ms at its end. */
  realS: number;
  endMs: number;
}

/** The kill moments: one per day, seeded, between 02:00 and 22:00 of the day. */
export function killMoments(config: SoakConfig): number[] {
  let x = config.seed * 2_654_435_761 + 1;
  const next = (): number => {
    x = (Math.imul(x ^ (x >>> 15), 2_246_822_519) + 0x9e3779b9) >>> 0;
    return x / 2 ** 32;
  };
  return Array.from(
    { length: config.days },
    (_, d) => config.startMs + d * DAY_MS + 2 * HOUR_MS + Math.floor(next() * 20 * HOUR_MS),
  );
}

const emptyDay = (): ProcessDay => ({
  samples: 0,
  rssMaxBytes: 0,
  heapMaxBytes: 0,
  fds: [],
  handles: [],
  eventLoopP99MaxS: 0,
  cpuS: 0,
});

/** Waits for the first claim commit of the kline table under `out` made at or after `sinceRealMs`; its time. */
async function claimedAt(out: string, sinceRealMs: number, giveUpMs: number): Promise<number | undefined> {
  const deadline = Date.now() + giveUpMs;
  while (Date.now() < deadline) {
    const claim = (await claimCommits(out, 'kline')).find((c) => c.timestampMs >= sinceRealMs);
    if (claim !== undefined) return claim.timestampMs;
    await sleep(100);
  }
  return undefined;
}

/** Waits until the process answers /ready with 200; the market instant it did. */
async function readyAt(p: SoakProcess, clock: Clock, giveUpMs: number): Promise<number | undefined> {
  const deadline = Date.now() + giveUpMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${p.metricsPort}/ready`, {
        signal: AbortSignal.timeout(2_000),
      });
      if (res.status === 200) return clock.now();
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  return undefined;
}

export class SoakRun {
  readonly record: SoakRecord;
  readonly #lastCpu = new Map<string, { pid: number; cpuS: number }>();

  constructor(
    private readonly config: SoakConfig,
    private readonly clock: Clock,
    private readonly processes: readonly SoakProcess[],
    private readonly sync: SoakProcess,
    private readonly out: string,
    private readonly log: (line: string) => void,
    /** Where every sample goes too, one JSON line each (`samples.jsonl`). */
    private readonly workDir: string,
  ) {
    this.record = {
      days: Array.from({ length: config.days }, () => ({ processes: {}, tables: [], loads: [] })),
      kills: [],
      firstReadyAtMs: undefined,
      settle: undefined,
      stoppedAtMs: config.startMs,
      stops: {},
      realS: 0,
      endMs: config.startMs,
    };
  }

  /** Runs the simulated days: starts, samples, kills and restarts, the day-end figures, the stop. */
  async run(): Promise<void> {
    const { config, clock } = this;
    const t0 = Date.now();
    const endMs = config.startMs + config.days * DAY_MS;
    const kills = killMoments(config);
    for (const p of this.processes) p.start();
    const firstReady = readyAt(this.sync, clock, 600_000).then((at) => (this.record.firstReadyAtMs = at));
    const restarts: Promise<unknown>[] = [firstReady];
    const stepMs = config.sampleMinutes * MINUTE_MS;
    let next = config.startMs + stepMs;
    let day = 0;
    while (next <= endMs) {
      await this.#until(next);
      const kill = kills[0];
      if (kill !== undefined && clock.now() >= kill) {
        kills.shift();
        restarts.push(this.#killAndRestart(Math.floor((kill - config.startMs) / DAY_MS)));
      }
      this.#restartCrashed();
      await this.#sample(Math.min(config.days - 1, Math.floor((next - 1 - config.startMs) / DAY_MS)));
      if (next >= config.startMs + (day + 1) * DAY_MS) {
        this.record.days[day]!.tables = await Promise.all(
          ['kline', 'depth', 'suspension'].map((d) => tableFigures(this.out, d)),
        );
        this.log(this.#dayLine(day, t0));
        day++;
      }
      next += stepMs;
    }
    await Promise.all(restarts);
    await this.#until(endMs + config.graceMinutes * MINUTE_MS);
    const settled = await settle(this.sync, SETTLE_GIVE_UP_MS);
    this.record.settle = settled;
    this.log(
      `the sync ${settled.settled ? 'caught up and committed' : 'did not catch up'} ${settled.waitedS.toFixed(1)} s after the grace (lag ${settled.lagS.toFixed(0)} s)`,
    );
    this.record.stoppedAtMs = clock.now();
    for (const p of this.processes) this.record.stops[p.name] = await p.stop();
    this.record.realS = (Date.now() - t0) / 1000;
    this.record.endMs = clock.now();
  }

  /** Real time until the market clock reads `atMs`. */
  async #until(atMs: number): Promise<void> {
    const waitMs = (atMs - this.clock.now()) / this.config.speed;
    if (waitMs > 0) await sleep(waitMs);
  }

  async #killAndRestart(day: number): Promise<void> {
    const atMs = this.clock.now();
    const atRealMs = Date.now();
    await this.sync.kill9();
    const kill: SoakKill = { day, atMs, atRealMs, readyAtMs: undefined, claimedAtRealMs: undefined };
    this.record.kills.push(kill);
    this.sync.start();
    [kill.readyAtMs, kill.claimedAtRealMs] = await Promise.all([
      readyAt(this.sync, this.clock, 600_000),
      claimedAt(this.out, atRealMs, 600_000),
    ]);
    this.log(
      `kill -9 of the sync at ${new Date(atMs).toISOString()}, ready again at ${kill.readyAtMs === undefined ? 'never' : new Date(kill.readyAtMs).toISOString()}`,
    );
  }

  /** A process that exited on its own is started again (and counted among its crashes). */
  #restartCrashed(): void {
    for (const p of this.processes)
      if (p.crashed) {
        this.log(
          `${p.name} exited on its own (${p.crashes.at(-1)?.code}): ${p.crashes.at(-1)?.stderr.slice(-600)}`,
        );
        p.start();
      }
  }

  async #sample(day: number): Promise<void> {
    this.record.days[day]!.loads.push(loadavg()[0]!);
    const bucket = this.record.days[day]!.processes;
    await Promise.all(
      this.processes.map(async (p) => {
        const s: ProcessSample | undefined = await p.sample();
        const d = (bucket[p.name] ??= emptyDay());
        const pid = p.pid;
        const cpuS = await p.cpuSeconds();
        const last = this.#lastCpu.get(p.name);
        if (pid !== undefined) {
          d.cpuS += last?.pid === pid ? Math.max(0, cpuS - last.cpuS) : cpuS;
          this.#lastCpu.set(p.name, { pid, cpuS });
        }
        if (s === undefined) return;
        const { metrics: _metrics, ...figures } = s;
        await appendFile(
          join(this.workDir, 'samples.jsonl'),
          `${JSON.stringify({ name: p.name, pid, cpuTotalS: cpuS, ...figures })}\n`,
        );
        d.samples++;
        d.rssMaxBytes = Math.max(d.rssMaxBytes, s.rssBytes);
        d.heapMaxBytes = Math.max(d.heapMaxBytes, s.heapUsedBytes);
        d.fds.push(s.fds);
        d.handles.push(s.handles);
        d.eventLoopP99MaxS = Math.max(d.eventLoopP99MaxS, s.eventLoopP99S);
      }),
    );
  }

  #dayLine(day: number, t0: number): string {
    const realS = (Date.now() - t0) / 1000;
    const simS = (this.clock.now() - this.config.startMs) / 1000;
    const ps = Object.entries(this.record.days[day]!.processes)
      .map(([name, d]) => `${name} rss ${(d.rssMaxBytes / 1e6).toFixed(0)} MB cpu ${d.cpuS.toFixed(0)} s`)
      .join(', ');
    return `day ${day + 1} done after ${realS.toFixed(0)} s real (${(simS / realS).toFixed(0)}x): ${ps}`;
  }
}
