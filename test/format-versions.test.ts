/**
 * Versions that carry on. test/fixtures/format-v1 holds what the release before format versions
 * left behind (commit 3971a3c, scripts/fixtures/format-v1.ts): a K-line table (a crypto and a
 * stock code, 1-minute and daily bars), depth and suspension files, a `--state` file, and the
 * committed records of `P.kline` and `P.kline.watermarks`, which the test produces into topics of
 * its own. This release's built binary continues all of it, against the same market (the
 * fixture's seed, the simulator's clock the next afternoon: the CLI on the wall clock sees every
 * bar closed, as the old one did): read back by delta-rs and kcat (read_committed), each series
 * runs from the fixture's first bar to the newest with no gap and no duplicate, the table, the
 * watermark records and the state file carry this release's format version, and the depth and
 * suspension files are still there once compacted into their tables.
 *
 * And a table, a watermark topic or a state file of a newer format than this release's is exit 2
 * naming both versions, before any request: the simulator logs none.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock } from '@quoteflow/core';
import { QUOTEFLOW_FORMAT_VERSION } from '@quoteflow/sinks/internal';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { tokenLabel } from '@quoteflow/simulator/internal';
import { consumeWithKcat, kafkaBrokers, uniquePrefix, waitUntil } from './support/kafka.js';
import { ensurePython, readDatasets, VENV_PYTHON } from './support/python.js';
import { runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';

const FIXTURE_DIR = join(import.meta.dirname, 'fixtures', 'format-v1');
const NEWER = QUOTEFLOW_FORMAT_VERSION + 1;
/** The market the continuation meets: the fixture's Wednesday evening, then Thursday 15:00 UTC (New York open). */
const CONTINUE_AT = Date.UTC(2026, 2, 5, 15, 0, 5);
// Tokens no topic prefix or path of the test contains (the CLI masks a token wherever it appears).
const NEWER_TOKEN = 'tok-7c1a9e';
const V1_TOKEN = 'tok-4d20b3';

interface Fixture {
  readonly producedBy: string;
  readonly seed: number;
  readonly clockMs: number;
  readonly codes: readonly string[];
  readonly klineTypes: readonly (1 | 8)[];
  readonly bars: number;
  readonly exchange: string;
}
interface FixtureRecord {
  readonly topic: 'kline' | 'kline.watermarks';
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: readonly string[];
}

let fixture: Fixture;
let work: string;
let brokers: string;
beforeAll(async () => {
  fixture = JSON.parse(await readFile(join(FIXTURE_DIR, 'fixture.json'), 'utf8')) as Fixture;
  work = await mkdtemp(join(tmpdir(), 'qf-format-versions-'));
  brokers = await kafkaBrokers();
  ensurePython();
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const env = (sim: Simulator, token: string): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
});

/** A copy of the fixture's dataset and state file under a directory of the test's own. */
async function copyFixture(name: string): Promise<{ out: string; state: string }> {
  const out = join(work, name, 'out');
  const state = join(work, name, 'state.json');
  await cp(join(FIXTURE_DIR, 'out'), out, { recursive: true });
  await cp(join(FIXTURE_DIR, 'state.json'), state);
  return { out, state };
}

/** Creates `prefix`'s topics as the old sink did and produces the fixture's committed records into them. */
async function produceFixtureRecords(prefix: string, extra: readonly FixtureRecord[] = []): Promise<void> {
  const records = (await readFile(join(FIXTURE_DIR, 'kafka.json'), 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as FixtureRecord);
  const kafka = new kafkajs.Kafka({
    clientId: 'qft-format',
    brokers: [brokers],
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await Promise.all([admin.connect(), producer.connect()]);
  try {
    // No waiting for leaders (kafkajs's wait gives up on the "unknown topic" a KRaft broker answers
    // right after a create): the producer's retries wait for them.
    await admin.createTopics({
      waitForLeaders: false,
      topics: [
        { topic: `${prefix}.kline`, numPartitions: 1 },
        {
          topic: `${prefix}.kline.watermarks`,
          numPartitions: 1,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    });
    for (const topic of ['kline', 'kline.watermarks'] as const)
      await producer.send({
        topic: `${prefix}.${topic}`,
        messages: [...records, ...extra]
          .filter((r) => r.topic === topic)
          .map((r) => ({ key: r.key, value: r.value, headers: headersOf(r.headers) })),
      });
  } finally {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  }
}

/** kcat's `-J` headers (`[k1, v1, k2, v2, …]`) as kafkajs takes them. */
function headersOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/** Sets the `quoteflow.formatVersion` property of version 0 of a table (as a newer release would). */
async function markTableNewer(table: string): Promise<void> {
  const path = join(table, '_delta_log', `${'0'.repeat(20)}.json`);
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  const out = lines.map((l) => {
    const a = JSON.parse(l) as { metaData?: { configuration: Record<string, string> } };
    if (a.metaData !== undefined) a.metaData.configuration['quoteflow.formatVersion'] = String(NEWER);
    return JSON.stringify(a);
  });
  await writeFile(path, `${out.join('\n')}\n`);
}

/** A Delta table's newest version and table properties, read by delta-rs. */
function deltaMetadata(table: string): { version: number; configuration: Record<string, string> } {
  const script =
    'import json, sys, deltalake\n' +
    't = deltalake.DeltaTable(sys.argv[1])\n' +
    "print(json.dumps({'version': t.version(), 'configuration': t.metadata().configuration}))";
  const r = spawnSync(VENV_PYTHON, ['-c', script, table], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`delta-rs could not read ${table}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { version: number; configuration: Record<string, string> };
}

// The refusals and the continuation wait on processes of their own: at once.
describe.concurrent('format versions', () => {
  describe.concurrent('a table, watermark topic or state file of a newer format', () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ port: 0, tokens: { [NEWER_TOKEN]: 'professional' }, seed: 34 });
    });
    afterAll(async () => {
      await sim.close();
    });

    const refused = `newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}`;
    const sync = (out: string, more: readonly string[] = []) =>
      runQuoteflow(
        ['sync', '--codes', 'BTCUSDT,AAPL.US', '--kline-types', '1,8', '--bars', '30', '--out', out, ...more],
        env(sim, NEWER_TOKEN),
      );

    it('the K-line table: exit 2 naming the table and both versions, before any request', async ({
      expect,
    }) => {
      const { out } = await copyFixture('newer-table');
      await markTableNewer(join(out, 'kline'));
      const r = await sync(out, ['--duration', '5']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `the kline table at ${out} was written in quoteflow format version ${NEWER}, ${refused}`,
      );
      expect(sim.log.entries()).toEqual([]);
    });

    it('the state file: exit 2 naming the file and both versions, before any request', async ({ expect }) => {
      const state = join(work, 'newer-state.json');
      await writeFile(state, JSON.stringify({ version: 2, formatVersion: NEWER, series: {}, files: [] }));
      const r = await sync(join(work, 'newer-state-out'), ['--state', state, '--duration', '5']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `state file ${JSON.stringify(state)} was written in quoteflow format version ${NEWER}, ${refused}`,
      );
      expect(sim.log.entries()).toEqual([]);
    });

    it('the watermark topic: exit 2 naming the record and both versions, before any request', async ({
      expect,
    }) => {
      const prefix = uniquePrefix('newer');
      const value = JSON.stringify({ series: 'BTCUSDT|1', format_version: NEWER });
      await produceFixtureRecords(prefix, [
        { topic: 'kline.watermarks', key: 'BTCUSDT|1', value, headers: [] },
      ]);
      const r = await sync(join(work, 'newer-topic-out'), [
        '--kafka',
        brokers,
        '--topic-prefix',
        prefix,
        '--duration',
        '5',
      ]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(
          `kafka: ${prefix}\\.kline\\.watermarks partition 0 offset \\d+ \\(key "BTCUSDT\\|1"\\) was written in quoteflow format version ${NEWER}, ${refused}`,
        ),
      );
      expect(sim.log.entries()).toEqual([]);
    });
  });

  describe('the dataset, watermarks and state of format version 1', () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({
        port: 0,
        tokens: Object.fromEntries(
          ['sync', 'depth', 'suspensions'].map((c) => [`${c}-${V1_TOKEN}`, 'professional']),
        ),
        seed: fixture.seed,
        clock: acceleratedClock({ speed: 1, startMs: CONTINUE_AT }),
      });
    });
    afterAll(async () => {
      await sim.close();
    });

    it('are continued by this release with no gap and no duplicate, in the table, in Kafka and in the state', async () => {
      expect(fixture.producedBy).toMatch(/^3971a3c/);
      const { out, state } = await copyFixture('continue');
      const prefix = uniquePrefix('format-v1');
      await produceFixtureRecords(prefix);
      const codes = fixture.codes.join(',');
      const sync = ['sync', '--codes', codes, '--kline-types', fixture.klineTypes.join(','), '--bars', '30'];
      const syncing = startQuoteflow(
        [...sync, '--out', out, '--state', state, '--kafka', brokers, '--topic-prefix', prefix],
        { ...env(sim, `sync-${V1_TOKEN}`), QUOTEFLOW_LOG_LEVEL: 'info' },
      );
      const depth = startQuoteflow(['depth', '--codes', codes, '--out', out], env(sim, `depth-${V1_TOKEN}`));
      const watch = startQuoteflow(
        ['suspensions', '--exchange', fixture.exchange, '--watch', '--out', out, '--duration', '8'],
        env(sim, `suspensions-${V1_TOKEN}`),
      );
      // Stopped (SIGTERM: flush, commit) once the gap is filled, and once a second depth poll shows
      // the first one's ticks were taken (polls follow each other).
      await waitUntil(() => syncing.stderr().includes('"msg":"backfill done"'), 'the sync filled the gap');
      syncing.child.kill('SIGTERM');
      const depthLabel = tokenLabel(`depth-${V1_TOKEN}`, 'professional');
      await waitUntil(
        () => sim.log.count({ endpoint: 'depth-tick', token: depthLabel, status: 200 }) >= 2,
        'two depth polls',
      );
      depth.child.kill('SIGTERM');
      for (const r of await Promise.all([syncing.done, depth.done, watch.done]))
        expect(r.code, r.stderr).toBe(0);

      const expected = await expectTableContinued(sim, out);
      // Kafka, read committed by kcat: the fixture's final bars and this release's, each once.
      const records = await consumeWithKcat(brokers, `${prefix}.kline`, 30_000, 'read_committed');
      expect(seriesOf(records.map((r) => JSON.parse(r.value) as KlineValue).filter((v) => v.final))).toEqual(
        expected,
      );
      const marks = await consumeWithKcat(brokers, `${prefix}.kline.watermarks`, 30_000, 'read_committed');
      for (const [key, ts] of expected) {
        const newest = marks.filter((m) => m.key === key.replace(':', '|')).at(-1)!;
        expect(JSON.parse(newest.value), key).toMatchObject({
          first: ts[0],
          last: ts.at(-1),
          rows: ts.length,
          format_version: QUOTEFLOW_FORMAT_VERSION,
        });
      }
      // The state file: this release's format, what the table holds.
      const after = JSON.parse(await readFile(state, 'utf8')) as StateFile;
      expect(after.formatVersion).toBe(QUOTEFLOW_FORMAT_VERSION);
      for (const [key, ts] of expected)
        expect(after.series[key], key).toEqual({ first: ts[0], last: ts.at(-1), rows: ts.length });
      await expectDepthAndSuspensionsContinued(out);
      // Five CLI runs, Kafka, compact and delta-rs: about a minute alone, twice that on a busy machine.
    }, 240_000);
  });
});

interface KlineValue {
  readonly code: string;
  readonly kline_type: number;
  readonly ts: number | string;
  readonly final?: boolean;
}
interface StateFile {
  readonly formatVersion?: number;
  readonly series: Record<string, { first: number; last: number; rows: number }>;
}

/** Per series (`CODE:K`, sorted) the bar starts (epoch ms, sorted) of `rows`. */
function seriesOf(rows: readonly KlineValue[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const key = `${r.code}:${r.kline_type}`;
    out.set(key, [...(out.get(key) ?? []), typeof r.ts === 'number' ? r.ts : Date.parse(r.ts)]);
  }
  for (const ts of out.values()) ts.sort((a, b) => a - b);
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The K-line table read by delta-rs: each series from the fixture's first bar to the newest the
 * continuation took (at least the bar forming when it met the market), every bar of the market
 * once, more than the fixture held; the table raised to this release's format. Returns the series.
 */
async function expectTableContinued(sim: Simulator, out: string): Promise<Map<string, number[]>> {
  const before = JSON.parse(await readFile(join(FIXTURE_DIR, 'state.json'), 'utf8')) as StateFile;
  const [table] = await readDatasets([{ reader: 'deltalake', path: join(out, 'kline') }]);
  const held = seriesOf(table!.rows as unknown as KlineValue[]);
  const expected = new Map<string, number[]>();
  for (const code of fixture.codes)
    for (const klineType of fixture.klineTypes) {
      const key = `${code}:${klineType}`;
      const mine = held.get(key) ?? [];
      const [first, last] = [before.series[key]!.first, mine.at(-1)!];
      expect(last, key).toBeGreaterThanOrEqual(sim.market.bars(code, klineType, CONTINUE_AT, 1)[0]!.startMs);
      const market = sim.market
        .bars(code, klineType, sim.marketNow(), 3_000)
        .map((b) => b.startMs)
        .filter((t) => t >= first && t <= last);
      expect(mine, `${key}: no gap, no duplicate`).toEqual(market);
      expect(mine.length, key).toBeGreaterThan(before.series[key]!.rows);
      expected.set(key, market);
    }
  expect([...held.keys()].sort()).toEqual([...expected.keys()].sort());
  const meta = deltaMetadata(join(out, 'kline'));
  expect(meta.version).toBeGreaterThan(0);
  expect(meta.configuration).toEqual({ 'quoteflow.formatVersion': String(QUOTEFLOW_FORMAT_VERSION) });
  return new Map([...expected].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The depth and suspension files of both releases, committed into tables of this release's format
 * by `compact`, read by delta-rs: every tick and record of the fixture still there, and new ones.
 */
async function expectDepthAndSuspensionsContinued(out: string): Promise<void> {
  const [oldDepth, oldSuspension] = await readDatasets([
    { reader: 'pyarrow', path: join(FIXTURE_DIR, 'out', 'depth'), hive: true },
    { reader: 'pyarrow', path: join(FIXTURE_DIR, 'out', 'suspension'), hive: true },
  ]);
  const compact = await runQuoteflow(['compact', '--out', out, '--format', 'json'], {});
  expect(compact.code, compact.stderr).toBe(0);
  const [depth, suspension] = await readDatasets([
    { reader: 'deltalake', path: join(out, 'depth') },
    { reader: 'deltalake', path: join(out, 'suspension') },
  ]);
  const tick = (r: Record<string, unknown>): string => `${String(r['code'])}#${String(r['seq'])}`;
  const ticks = depth!.rows.map(tick);
  expect(new Set(ticks).size, 'depth: each tick once').toBe(ticks.length);
  expect(ticks).toEqual(expect.arrayContaining(oldDepth!.rows.map(tick)));
  expect(ticks.length).toBeGreaterThan(oldDepth!.rows.length);
  const record = (r: Record<string, unknown>): string =>
    `${String(r['symbol'])}@${String(r['publish_date'])}`;
  expect(suspension!.rows.map(record)).toEqual(expect.arrayContaining(oldSuspension!.rows.map(record)));
  for (const dataset of ['depth', 'suspension'])
    expect(deltaMetadata(join(out, dataset)).configuration, dataset).toEqual({
      'quoteflow.formatVersion': String(QUOTEFLOW_FORMAT_VERSION),
    });
}
