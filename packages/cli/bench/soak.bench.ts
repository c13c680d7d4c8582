// A week in the life (`pnpm bench soak`): the real CLI as users run it (`quoteflow sync` into a
// Delta dataset and Kafka exactly once, `quoteflow depth`, `quoteflow suspensions --watch`) against
// the simulator in a process of its own, all on one accelerated clock (the CLI's test-only
// QF_TEST_CLOCK seam), from a Monday 00:00 UTC to the next Monday: the week of the US change from
// daylight saving time (Sunday 2 November 2025: forex's Sunday open moves from 21:00 to 22:00 UTC)
// and of Hong Kong's Chung Yeung holiday (Wednesday 29 October). One kill -9 and restart of the
// sync per simulated day. Each process is sampled every few simulated minutes through its own
// --metrics-port (RSS, heap, handles, event-loop delay) and /proc (descriptors, CPU); the tables'
// log versions and files per partition at each day's end; the simulator counts requests and
// refusals per day of its daily limit. At the end delta-rs reads the kline table and kcat the
// kline topic read_committed: every closed bar of the week once, with the market's values; the
// freshness of each 1-minute bar per class and day against the planner's period + 1 s.
// Settings: soak-config.ts (SOAK_SPEED, SOAK_DAYS, SOAK_SYNTHETIC; SOAK_STRICT=1 exits 1 when a
// target other than a timed one is missed: the CI step).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSharedClock } from '../../../test/support/shared-clock.js';
import { benchBroker } from '../../sinks/bench/bench-broker.js';
import { DAY_MS, soakConfig } from './soak/soak-config.js';
import { freshnessByClassAndDay, marketOfCode } from './soak/soak-freshness.js';
import { pollsPerDay } from './soak/soak-polls.js';
import { SoakProcess, freePort } from './soak/soak-process.js';
import {
  budgetTable,
  evaluateTargets,
  freshnessTable,
  onceTable,
  pollsTable,
  processTable,
  tablesTable,
  takeoverTarget,
  targetsTable,
} from './soak/soak-report.js';
import { SoakRun } from './soak/soak-run.js';
import { SoakSim } from './soak/soak-sim-client.js';
import {
  SOAK_BARS,
  SOAK_DEPTH_CODES,
  SOAK_KLINE_TYPES,
  SOAK_SUSPENSION_EXCHANGE,
  largestFittingUniverse,
  planOf,
  soakCodes,
  soakHalts,
} from './soak/soak-universe.js';
import { checkOnce, readKafkaFinals, readKlineTable } from './soak/soak-verify.js';

const config = soakConfig();
const work = await mkdtemp(join(tmpdir(), 'qf-soak-'));
const out = join(work, 'data');
const logs = join(work, 'logs');
await mkdir(logs, { recursive: true });
const log = (line: string): void => console.error(`soak: ${line}`);

const universe = soakCodes(config.synthetic);
const codes = universe.map((u) => u.code);
const classOf = new Map(universe.map((u) => [u.code, u.productClass]));
const plan = planOf(codes, config.depthIntervalMs, work);
const largest = largestFittingUniverse(config.depthIntervalMs, work);
const classes = [...new Set(universe.map((u) => u.productClass))];
console.log(
  `Universe: ${codes.length} codes of ${classes.length} classes (${classes.join(', ')}) × kline types ` +
    `${SOAK_KLINE_TYPES.join(', ')} = ${codes.length * SOAK_KLINE_TYPES.length} series; depth of ` +
    `${SOAK_DEPTH_CODES.length} codes every ${config.depthIntervalMs} ms; suspensions of ${SOAK_SUSPENSION_EXCHANGE} watched.`,
);
console.log(
  `\`quoteflow plan\` (professional): refresh every ${plan.refreshPeriodMs} ms, depth every ${plan.depthPeriodMs} ms, ` +
    `${plan.requestsPerDayByCalendar.toLocaleString('en-US')} requests on the busiest day ` +
    `(${(plan.dailyShareByCalendar * 100).toFixed(1)} % of the budget), fits: ${plan.fits}. The largest universe of ` +
    `these classes it sustains: ${largest.codes.toLocaleString('en-US')} codes (refresh every ${largest.plan.refreshPeriodMs} ms).`,
);
console.log(
  `Clock: ${config.speed}x from ${new Date(config.startMs).toISOString()} for ${config.days} day(s); a sample every ` +
    `${config.sampleMinutes} simulated minutes.`,
);

// A broker of its own (a fresh instance, removed at the end): a week's topics are not kept.
const brokerInstance = `soak-${randomBytes(4).toString('hex')}`;
const broker = benchBroker(brokerInstance);
const shared = newSharedClock({ speed: config.speed, startMs: config.startMs });
const token = `soak-${randomBytes(6).toString('hex')}`;
const sim = await SoakSim.start(
  {
    token,
    seed: config.seed,
    synthetic: config.synthetic,
    halts: soakHalts(config.startMs),
    requestLogFile: join(work, 'requests.tsv'),
  },
  shared.env,
);
const prefix = `soak${randomBytes(4).toString('hex')}`;
const env = {
  ...shared.env,
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: join(work, 'state'),
};
const kafka = ['--kafka', broker.brokers, '--topic-prefix', prefix];
// Upkeep judges the log's age by its files' modification times, on the machine's clock: the week
// runs in 1/speed of real time, so the log's retention (an hour locally by default) is given as
// the real time of one simulated hour, or no log would ever expire (what a real week keeps).
const upkeep = ['--upkeep-log-retention', `${(3_600 / config.speed).toFixed(1)}s`];
// Kafka's compaction is on the broker's clock too: the watermark topic rolls (and so compacts) its
// segments after the real time of the simulated hour a topic created by the sink rolls after.
kafka.push('--kafka-topic-config', `segment.ms=${Math.round(3_600_000 / config.speed)}`);
const now = (): number => shared.clock.now();
/** One of the soak's commands, as users run it (with its own --metrics-port). */
const command = async (name: string, args: readonly string[]): Promise<SoakProcess> =>
  new SoakProcess(name, [...args, '--out', out, ...kafka, ...upkeep], env, await freePort(), now, logs);
const sync = await command('sync', [
  'sync',
  ...['--codes', codes.join(','), '--kline-types', SOAK_KLINE_TYPES.join(','), '--bars', String(SOAK_BARS)],
]);
const depth = await command('depth', [
  'depth',
  ...['--codes', SOAK_DEPTH_CODES.join(','), '--interval-ms', String(config.depthIntervalMs)],
]);
const suspensions = await command('suspensions', [
  'suspensions',
  ...['--watch', '--exchange', SOAK_SUSPENSION_EXCHANGE, '--format', 'ndjson'],
]);
const processes = [sync, depth, suspensions];
const names = processes.map((p) => p.name);
const simCpu0 = await sim.cpuSeconds();
const run = new SoakRun(config, shared.clock, processes, sync, out, log, work);
let failed = false;
try {
  await run.run();
  const { record } = run;
  const simCpuS = (await sim.cpuSeconds()) - simCpu0;
  const counts = await sim.counts();
  log('reading the kline table (delta-rs) and topic (kcat, read_committed)');
  const [table, topic] = await Promise.all([
    readKlineTable(out),
    readKafkaFinals(broker.brokers, `${prefix}.kline`),
  ]);
  const series = codes.flatMap((code) => SOAK_KLINE_TYPES.map((klineType) => ({ code, klineType })));
  // Every bar that closed in the simulated days, once; those of the grace after them may be there.
  const window = {
    fromMs: config.startMs,
    completeToMs: config.startMs + config.days * DAY_MS,
    nowMs: record.stoppedAtMs,
  };
  const checks = [
    await checkOnce(
      `delta-rs (version ${table.version}, ${table.files} files)`,
      table.bars,
      series,
      sim,
      window,
    ),
    await checkOnce(
      `kcat read_committed (${topic.records.toLocaleString('en-US')} records)`,
      topic.finals,
      series,
      sim,
      window,
    ),
  ];
  const downtimes: [number, number][] = [
    [config.startMs, record.firstReadyAtMs ?? record.endMs],
    ...record.kills.map((k): [number, number] => [k.atMs, k.readyAtMs ?? record.endMs]),
  ];
  const freshness = freshnessByClassAndDay(
    table.bars,
    classOf,
    { startMs: config.startMs, endMs: config.startMs + config.days * DAY_MS },
    downtimes,
  );
  const periodOf = new Map(plan.markets.map((m) => [m.market, m.refreshWhileTradingMs]));
  const sampleCode = new Map(universe.map((u) => [u.productClass, u.code]));
  const targetMsOf = (cls: string): number =>
    (periodOf.get(marketOfCode(sampleCode.get(cls) ?? '', cls)) ?? plan.refreshPeriodMs) + 1_000;
  const crashes = processes.reduce((n, p) => n + p.crashes.length, 0);
  const targets = evaluateTargets({
    config,
    record,
    names,
    counts,
    checks,
    freshness,
    targetMsOf,
    crashes,
    realLimitS: (3_600 * config.days) / 7,
  });
  targets.push(takeoverTarget(record.kills, config.speed));
  const realDayS = record.realS / config.days;
  console.log(
    `\nRan ${(record.realS / 60).toFixed(1)} min real for ${config.days} simulated day(s): ` +
      `${((record.endMs - config.startMs) / 1000 / record.realS).toFixed(0)}x on average; the simulator used ` +
      `${((100 * simCpuS) / record.realS).toFixed(0)} % of a core. The end waited ` +
      `${record.settle === undefined ? '–' : `${record.settle.waitedS.toFixed(1)} s for the sync to ${record.settle.settled ? 'catch up and commit' : 'catch up, in vain'}`}. Kills: ` +
      record.kills
        .map(
          (k) =>
            `${new Date(k.atMs).toISOString().slice(5, 16)}Z (ready after ${k.readyAtMs === undefined ? '–' : ((k.readyAtMs - k.atMs) / 1000).toFixed(0)} s)`,
        )
        .join(', '),
  );
  console.log(`\n### Targets\n\n${targetsTable(targets)}`);
  const polls = await pollsPerDay(join(work, 'requests.tsv'), config.startMs, config.days);
  console.log(
    `\n### The machine and the live polls per simulated day\n\n${pollsTable(polls, record, plan, realDayS)}`,
  );
  console.log(`\n### Processes per simulated day\n\n${processTable(record, names, realDayS)}`);
  console.log(`\n### Tables at each day's end\n\n${tablesTable(record)}`);
  console.log(`\n### Requests per day of the daily limit\n\n${budgetTable(counts)}`);
  console.log(
    `\n### Freshness of 1-minute bars (close to final read, simulated seconds)\n\n${freshnessTable(freshness, targetMsOf, config.days)}`,
  );
  console.log(`\n### Every closed bar of the week once\n\n${onceTable(checks)}`);
  for (const c of checks) for (const e of c.examples) console.log(`- ${e}`);
  for (const p of processes)
    for (const c of p.crashes)
      console.log(
        `- ${p.name} exited ${c.code} at ${new Date(c.atMs).toISOString()}: ${c.stderr.slice(-800)}`,
      );
  failed = targets.some((t) => !t.met && t.timed !== true);
} finally {
  await Promise.allSettled(processes.map((p) => p.stop()));
  await sim.close();
  broker.stop();
  if (broker.startedHere)
    await rm(join(import.meta.dirname, '..', '..', '..', '.cache', 'kafka', 'instances', brokerInstance), {
      recursive: true,
      force: true,
    });
  if (config.keep) log(`kept ${work}`);
  else await rm(work, { recursive: true, force: true });
}
if (failed && config.strict) process.exit(1);
