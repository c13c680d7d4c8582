/**
 * kill -9 of a sync's writer while its table upkeep works in the background, round after round,
 * on a local disk and on object storage (the run's S3Proxy): a `DatasetSink` with upkeep on
 * (small files merged tiered in the month being written and whole in the closed one, a Delta
 * checkpoint every 3 versions, a retention of a few seconds so that log expiry and, on S3,
 * vacuum run between the kills) is killed with SIGKILL at a random moment; each restart resends
 * from its last acknowledged bar, as a restarted sync resumes. After every round delta-rs reads
 * each version committed in it (whole, every bar at most once), the newest with every acknowledged
 * bar, and a file-listing reader of the local table sees no bar twice; at the end delta-rs, Polars,
 * Spark and DuckDB read every bar exactly once from the table as upkeep left it (Delta checkpoints,
 * its older log expired).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKlineBars } from '../packages/pipelines/src/index.js';
import { DatasetLog } from '../packages/sinks/src/index.js';
import { DELTA_READERS } from './support/delta-tables.js';
import { builtModule } from './support/built-module.js';
import { ensurePython, readDatasets, type ReadBack, type ReadRequest } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';
import { barScript, crashRowOf, crashRowsOf, expectNoneTwice } from './support/crash-bars.js';
import { startTsxChild } from './support/tsx-child.js';

const CODES = 7;
// Bars cross from January into February after an hour; the writer's clock is in February, so
// January is a closed month (merged whole) and February the one being written (merged tiered).
const T0 = Date.UTC(2026, 0, 31, 23, 0);
const BARS = { t0: T0, codes: CODES };
const PER_ROUND = 360;
const RETENTION_MS = 4_000;
let work: string;
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  work = await mkdtemp(join(tmpdir(), 'qf-upkeep-crash-'));
  bucket = await freshBucket('upkeep-crash');
}, 600_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const src = (path: string): string => JSON.stringify(builtModule(path));

// Sends bars [from, to) in checkpoints of 30 bars, saying after each commit how far it got and
// what its upkeep did. It imports the modules themselves, built (built-module.ts), not the
// packages (whose Kafka clients would slow every start).
const WRITER = `
import { ManualClock } from ${src('core/src/clock.ts')};
import { DatasetSink } from ${src('sinks/src/files/dataset-sink.ts')};
${barScript(BARS)}
const [dir, from, to] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
// The last writer ('last') waits, before its last checkpoint, for the table's Delta checkpoints to
// be older than the retention: that commit's round then expires the log (and on S3 vacuums) for
// certain, whatever the killed rounds got to.
const last = process.argv[5] === 'last';
const sink = await DatasetSink.open({
  dir,
  encoderThreads: 0,
  clock: new ManualClock(Date.UTC(2026, 1, 1, 12)),
  upkeep: { rowsPerFile: 200, checkpointEvery: 3, retentionMs: ${RETENTION_MS} },
  onUpkeep: (e) => {
    if (e.type !== 'upkeep-status') console.log('upkeep ' + e.type + (e.type === 'upkeep-failed' ? ' ' + e.error.message : ''));
  },
});
console.log('ready');
for (let n = from; n < to; ) {
  const end = Math.min(to, n + 30);
  if (last && end === to) {
    await sink.upkeepIdle();
    const aged = Date.now() + ${RETENTION_MS} + 500;
    while (Date.now() < aged) await new Promise((r) => setTimeout(r, aged - Date.now()));
  }
  for (; n < end; n++) sink.write(bar(n));
  await sink.checkpoint();
  console.log('committed ' + end);
}
await sink.upkeepIdle();
await sink.close();
console.log('done');
`;

const rowOf = (n: number): string => crashRowOf(BARS, n);

interface Backend {
  /** Where the writer writes (`DIR` or `s3://…`). */
  readonly dir: string;
  /** The kline table as the readers open it. */
  readonly table: string;
  readonly s3?: ReadRequest['s3'];
  readonly env: Record<string, string>;
  /** The versions whose commit is in the log now. */
  versions(): Promise<number[]>;
  /** Publishes what a killed writer committed (locally; nothing to do on object storage). */
  publish(): Promise<void>;
  /** Of `versions`, those from the newest compaction on (locally: whose files are all in place). */
  fromLastCompaction(versions: readonly number[]): Promise<number[]>;
  /** Whether a merge was being built when the writer was killed (its build is left behind). */
  killedMidMerge(scratch: string): Promise<boolean>;
}

const commitVersion = (name: string): number | undefined => {
  const m = /(?:^|\/)(\d{20})\.json$/.exec(name);
  return m === null ? undefined : Number(m[1]);
};

const hasBuild = async (dir: string): Promise<boolean> =>
  (await readdir(dir, { recursive: true }).catch(() => [] as string[])).some((n) => n.includes('compact-'));

function localBackend(): Backend {
  const dir = join(work, 'local');
  return {
    dir,
    table: join(dir, 'kline'),
    env: {},
    versions: async () =>
      (await readdir(join(dir, 'kline', '_delta_log')).catch(() => [] as string[])).flatMap(
        (n) => commitVersion(n) ?? [],
      ),
    publish: async () => (await DatasetLog.open(dir, 'kline')).transaction(async () => undefined),
    fromLastCompaction: async (versions) => {
      let from = -1;
      for (const v of versions) {
        const commit = await readFile(
          join(dir, 'kline', '_delta_log', `${String(v).padStart(20, '0')}.json`),
          'utf8',
        );
        if (commit.includes('"operation":"OPTIMIZE"')) from = v;
      }
      return versions.filter((v) => v >= from);
    },
    // Locally the build is under DIR/.staging/ (the next writer removes a dead one's).
    killedMidMerge: () => hasBuild(join(dir, '.staging')),
  };
}

function s3Backend(): Backend {
  return {
    dir: bucket.url('crash'),
    table: bucket.url('crash/kline'),
    s3: bucket.server,
    env: { ...bucket.env() },
    versions: async () =>
      (await bucket.keys('crash/kline/_delta_log/')).flatMap((k) => commitVersion(k) ?? []),
    publish: async () => undefined,
    // Removed files stay until the retention: every version reads.
    fromLastCompaction: async (versions) => [...versions],
    // On object storage the build is in the writer's scratch directory (under its TMPDIR).
    killedMidMerge: (scratch) => hasBuild(scratch),
  };
}

/** delta-rs' reads of the backend's table: at the newest version (`{}`) or at `{ version }`. */
function readerOf(backend: Backend) {
  return (extra: Partial<ReadRequest>[]): Promise<ReadBack[]> =>
    readDatasets(
      extra.map((e) => ({
        reader: 'deltalake' as const,
        path: backend.table,
        ...(backend.s3 === undefined ? {} : { s3: backend.s3 }),
        ...e,
      })),
    );
}

/** What the rounds saw: acked and sent bars, upkeep's events, versions checked. */
interface Tally {
  acked: number;
  sent: number;
  checked: number;
  midMerge: number;
  readVersions: number;
  swappedAway: number;
  readonly did: Map<string, number>;
  /** What each failed round of upkeep said (`upkeep-failed <message>`). */
  readonly failures: string[];
}

const countEvents = (tally: Tally, out: string): void => {
  for (const m of out.matchAll(/^upkeep (\S+)/gm)) tally.did.set(m[1]!, (tally.did.get(m[1]!) ?? 0) + 1);
  for (const m of out.matchAll(/^upkeep upkeep-failed (.*)$/gm)) tally.failures.push(m[1]!);
};

/** Polls `done` (every 2 ms) until it holds, for 15 s at most (the round's checks then tell). */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
}

/** Starts the writer and kills it: at any moment (even rounds), or while a merge is built (odd ones). */
async function killedWriter(backend: Backend, name: string, tally: Tally, round: number): Promise<void> {
  const scratch = join(work, `tmp-${name}-${round}`);
  await mkdir(scratch, { recursive: true });
  tally.sent = tally.acked + PER_ROUND;
  const child = await startTsxChild(
    join(work, `writer-${name}.mjs`),
    [backend.dir, String(tally.acked), String(tally.sent)],
    {
      ...backend.env,
      TMPDIR: scratch,
    },
  );
  // Half the kills at a random moment; the others while a merge is built, committed or swapped
  // in, which a random moment hits less often: within 150 ms of one starting, or as soon as its
  // build is seen (a merge of a few hundred rows may take less than the poll of a random delay).
  // The moments count from the writer's first commit: its start-up is slow on a loaded machine.
  const said = (line: string) => (): Promise<boolean> => Promise.resolve(child.out().includes(line));
  await until(said('committed'));
  if (round % 2 === 0) await new Promise((r) => setTimeout(r, Math.random() * 2500));
  else {
    await until(round % 4 === 1 ? () => backend.killedMidMerge(scratch) : said('upkeep compaction-started'));
    if (round % 4 === 3) await new Promise((r) => setTimeout(r, Math.random() * 150));
  }
  child.kill();
  const how = await child.exited;
  expect(how === 'SIGKILL' || how === null, child.err()).toBe(true);
  for (const m of child.out().matchAll(/^committed (\d+)$/gm))
    tally.acked = Math.max(tally.acked, Number(m[1]));
  countEvents(tally, child.out());
  if (await backend.killedMidMerge(scratch)) tally.midMerge++;
}

/**
 * After a kill: the newest version holds every acked bar once; every version committed since the
 * last check, whole, no bar twice (on object storage all of them; locally a compaction's swap
 * removed the files of the versions before it at once: those no longer read, as time travel past
 * a compaction); a file-listing reader of a local table sees no bar twice.
 */
async function checkRound(backend: Backend, name: string, tally: Tally, round: number): Promise<void> {
  const versions = (await backend.versions()).filter((v) => v > tally.checked).sort((a, b) => a - b);
  if (versions.length === 0 && tally.checked < 0) return; // killed before its first commit
  // Locally a commit is published (renames, a swap) after it is durable; a writer killed in
  // between leaves it to the next one, which publishes it first thing: as that one would.
  await backend.publish();
  const readable = await backend.fromLastCompaction(versions);
  const [now, ...each] = await readerOf(backend)([{}, ...readable.map((version) => ({ version }))]);
  expectNoneTwice(crashRowsOf(now!), `${name} round ${round}`);
  const newest = new Set(crashRowsOf(now!));
  for (let n = 0; n < tally.acked; n++)
    expect(newest.has(rowOf(n)), `${name} round ${round}: acked bar ${n}`).toBe(true);
  for (const [i, back] of each.entries())
    expectNoneTwice(crashRowsOf(back), `${name} version ${readable[i]}`);
  tally.readVersions += readable.length;
  tally.swappedAway += versions.length - readable.length;
  tally.checked = Math.max(tally.checked, ...versions);
  if (backend.s3 === undefined) {
    const listed = (await readKlineBars(backend.dir)).map((b) => `${b.code}|${b.tsMs}|${b.close}`);
    expectNoneTwice(listed, `${name} round ${round}: files listed`);
  }
}

/** Rounds of a killed writer, checked after each; then a last writer to the end and every reader. */
async function killRounds(backend: Backend, name: string, rounds: number): Promise<void> {
  const script = join(work, `writer-${name}.mjs`);
  await writeFile(script, WRITER);
  const tally: Tally = {
    acked: 0,
    sent: 0,
    checked: -1,
    midMerge: 0,
    readVersions: 0,
    swappedAway: 0,
    did: new Map(),
    failures: [],
  };
  for (let round = 0; round < rounds; round++) {
    await killedWriter(backend, name, tally, round);
    await checkRound(backend, name, tally, round);
  }
  // Log expiry and vacuum act on what is older than the retention (real time): the last writer
  // starts once everything the rounds wrote is, so its upkeep's first round has that work
  // however fast the rounds went (on an idle machine they take less than the retention).
  const retained = Date.now() + RETENTION_MS;
  while (Date.now() < retained) await new Promise((r) => setTimeout(r, retained - Date.now()));
  // A last writer sends everything up to where the rounds got and a round's worth more (merges
  // and checkpoints of its own, however little the killed rounds did), to its end, and lets
  // upkeep finish.
  tally.sent += PER_ROUND;
  const last = await startTsxChild(
    script,
    [backend.dir, String(tally.acked), String(tally.sent), 'last'],
    backend.env,
  );
  expect(await last.exited, last.err()).toBe(null);
  expect(last.out()).toContain('done');
  countEvents(tally, last.out());
  const { did } = tally;
  const summary =
    `${name}: ${JSON.stringify(Object.fromEntries(did))}, ${tally.midMerge} kill(s) mid-merge, ` +
    `${tally.readVersions} versions read (${tally.swappedAway} swapped away)` +
    (tally.failures.length === 0 ? '' : `; upkeep failed: ${tally.failures.join(' | ')}`);
  expect(tally.readVersions, summary).toBeGreaterThan(0);
  expect(did.get('upkeep-failed') ?? 0, summary).toBe(0);
  expect(did.get('compacted') ?? 0, summary).toBeGreaterThan(5);
  expect(did.get('checkpointed') ?? 0, summary).toBeGreaterThan(2);
  expect(did.get('log-expired') ?? 0, summary).toBeGreaterThan(0);
  if (backend.s3 !== undefined) expect(did.get('vacuumed') ?? 0, summary).toBeGreaterThan(0);
  expect(tally.midMerge, summary).toBeGreaterThan(0);
  await expectEachBarOnce(backend, name, tally.sent);
}

/** Every Delta reader (and locally a file-listing one) reads each of the `sent` bars once. */
async function expectEachBarOnce(backend: Backend, name: string, sent: number): Promise<void> {
  const want = Array.from({ length: sent }, (_, n) => rowOf(n)).sort();
  const finals = await readDatasets(
    DELTA_READERS.map((reader) => ({
      reader,
      path: backend.table,
      ...(backend.s3 === undefined ? {} : { s3: backend.s3 }),
    })),
  );
  for (const back of finals) expect(crashRowsOf(back), `${name}: ${back.reader}`).toEqual(want);
  if (backend.s3 === undefined) {
    const listed = (await readKlineBars(backend.dir)).map((b) => `${b.code}|${b.tsMs}|${b.close}`).sort();
    expect(listed, `${name}: files listed`).toEqual(want);
  }
}

describe.concurrent('kill -9 during background compaction, checkpoints, log expiry and vacuum', () => {
  it(
    'on a local disk: every version read whole, each bar once at the end',
    () => killRounds(localBackend(), 'local', 4),
    600_000,
  );
  it(
    'on S3: every version read whole, each bar once at the end',
    () => killRounds(s3Backend(), 's3', 4),
    600_000,
  );
});
