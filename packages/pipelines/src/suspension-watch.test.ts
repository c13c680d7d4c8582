import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  QuoteflowClient,
  acceleratedClock,
  type Clock,
  type Exchange,
  type SuspensionRecord,
} from '@quoteflow/core';
import { decodeSuspensionResponse } from '@quoteflow/core/internal';
import { createSuspensionDiffer, type SuspensionChange } from '@quoteflow/operators';
import type { KafkaDriverFactory, KafkaMessage } from '@quoteflow/sinks';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { suspensionRecords } from '@quoteflow/simulator/internal';
import { suspensionWatch } from './suspension-watch.js';

const TOKEN = 'pipelines-suspension-watch-token';
const SEED = 3;
/** Market time at 120x: one suspension query a minute is one every half second. */
const SPEED = 120;
let sim: Simulator | undefined;
let client: QuoteflowClient | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-suspension-watch-'));
});
afterEach(async () => {
  expect(sim?.log.refused() ?? []).toEqual([]);
  await client?.close();
  await sim?.close();
  client = undefined;
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A simulator and a client on one clock that starts at `startMs` now. */
async function start(startMs: number, plan: 'basic' | 'professional' = 'basic'): Promise<Clock> {
  const clock = acceleratedClock({ speed: SPEED, startMs });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: plan }, seed: SEED, clock });
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan, clock });
  return clock;
}

/** What the simulator answers at market time `atMs`, decoded as the client decodes it. */
function served(exchange: Exchange, atMs: number): SuspensionRecord[] {
  const data = suspensionRecords(exchange, atMs, SEED);
  return decodeSuspensionResponse(
    exchange,
    200,
    JSON.stringify({ success: true, timestamp: '', totalCount: data.length, data }),
  );
}

/**
 * Market instants after which the exchange's records (seed 3) stay the same for 2 minutes, then
 * change within 2 more: the first found minute by minute from 2026-01-06 14:30 UTC.
 */
const CHANGE_AHEAD: Readonly<Record<'nyse' | 'nasdaq', number>> = {
  nyse: Date.UTC(2026, 0, 6, 19, 45),
  nasdaq: Date.UTC(2026, 0, 6, 14, 42),
};

/** {@link CHANGE_AHEAD} of `exchange`, checked against the simulator's records. */
function changeAhead(exchange: 'nyse' | 'nasdaq'): number {
  const t = CHANGE_AHEAD[exchange];
  const differ = createSuspensionDiffer();
  differ.diff(served(exchange, t));
  const quiet = differ.diff(served(exchange, t + 120_000)).length === 0;
  if (!quiet || differ.diff(served(exchange, t + 240_000)).length === 0)
    throw new Error(
      `the simulator's ${exchange} records no longer change 2-4 minutes after ${new Date(t).toISOString()}`,
    );
  return t;
}

/** The changes of the snapshots the watch read: the first `polls` answers of `exchange`, replayed. */
function expectedChanges(exchange: Exchange, polls: number, emitInitial: boolean): SuspensionChange[] {
  const answered = sim!.log
    .entries()
    .filter((e) => e.endpoint === 'suspension' && e.family === exchange && e.status === 200);
  const differ = createSuspensionDiffer({ emitInitial });
  return answered.slice(0, polls).flatMap((e) => differ.diff(served(exchange, e.marketMs)));
}

function memoryDriver(sent: KafkaMessage[]): KafkaDriverFactory {
  return () => ({
    name: 'memory',
    connect: () => Promise.resolve(),
    ensureTopics: () => Promise.resolve(),
    send: (messages) => {
      sent.push(...messages);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  });
}

async function rows(): Promise<{ symbol: string }[]> {
  const out: { symbol: string }[] = [];
  for (const e of await readdir(join(dir, 'suspension'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.parentPath.includes('_delta_log')) continue;
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n'))
      if (line.trim() !== '') out.push(JSON.parse(line) as { symbol: string });
  }
  return out;
}

describe('suspensionWatch', () => {
  it('emits each new or changed record once, to onChange, the files and Kafka, and flushes on stop', async () => {
    await start(changeAhead('nyse'));
    const changes: SuspensionChange[] = [];
    const sent: KafkaMessage[] = [];
    const watch = suspensionWatch({
      client: client!,
      exchanges: ['nyse'],
      files: { dir, format: 'ndjson', maxFileAgeMs: 3_600_000 },
      kafka: { brokers: '127.0.0.1:9092', topicPrefix: 'qft-susp', driver: memoryDriver(sent) },
      onChange: (c) => changes.push(c),
    });
    await vi.waitFor(() => expect(sim!.log.count({ endpoint: 'suspension' })).toBeGreaterThanOrEqual(6), {
      timeout: 20_000,
      interval: 50,
    });
    const summary = await watch.stop();

    expect(summary.polls).toBeGreaterThanOrEqual(5);
    expect(changes).toEqual(expectedChanges('nyse', summary.polls, true));
    expect(summary.changes).toBe(changes.length);
    // The first snapshot reports every record; a later one only what changed (at least once here).
    expect(changes.length).toBeGreaterThan(expectedChanges('nyse', 1, true).length);
    const stored = changes.filter((c) => c.change !== 'removed');
    expect((await rows()).map((r) => r.symbol)).toEqual(stored.map((c) => c.record.symbol));
    expect(summary.files.length).toBeGreaterThan(0);
    expect(sent.map((m) => m.topic)).toEqual(stored.map(() => 'qft-susp.suspension'));
    expect(
      sent.map((m) => JSON.parse(m.value.toString()) as { symbol: string }).map((v) => v.symbol),
    ).toEqual(stored.map((c) => c.record.symbol));
  });

  it('takes the first snapshot of each exchange silently without emitInitial, and keeps to one query a minute', async () => {
    await start(changeAhead('nasdaq'), 'professional');
    const changes: SuspensionChange[] = [];
    const watch = suspensionWatch({
      client: client!,
      exchanges: ['nyse', 'nasdaq'],
      emitInitial: false,
      onChange: (c) => changes.push(c),
    });
    // Until the watch has reported nasdaq's change (2-4 market minutes in: at 120x, a second or two,
    // however the machine's load spreads the queries) and made at least six queries.
    await vi.waitFor(
      () => {
        expect(changes.some((c) => c.record.exchange === 'nasdaq')).toBe(true);
        expect(sim!.log.count({ endpoint: 'suspension' })).toBeGreaterThanOrEqual(6);
      },
      { timeout: 20_000, interval: 50 },
    );
    const summary = await watch.stop();
    for (const exchange of ['nyse', 'nasdaq'] as const) {
      // The stop may have cut off the answer of the exchange's last query: either may be the last read.
      const answered = sim!.log.count({ endpoint: 'suspension', family: exchange, status: 200 });
      expect(answered).toBeGreaterThanOrEqual(2);
      expect([
        expectedChanges(exchange, answered, false),
        expectedChanges(exchange, answered - 1, false),
      ]).toContainEqual(changes.filter((c) => c.record.exchange === exchange));
    }
    expect(summary).toMatchObject({ changes: changes.length, files: [], fileCount: 0 });
    const arrivals = sim!.log
      .entries()
      .filter((e) => e.endpoint === 'suspension')
      .map((e) => e.arrivalMs);
    for (let i = 1; i < arrivals.length; i++)
      expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(60_000);
  });

  it('reports a transient failure as a warning and polls again without repeating what it knows', async () => {
    const startMs = changeAhead('nyse');
    const clock = acceleratedClock({ speed: SPEED, startMs });
    sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'basic' }, seed: SEED, clock });
    client = new QuoteflowClient({
      baseUrl: sim.url,
      token: TOKEN,
      plan: 'basic',
      clock,
      retry: { maxAttempts: 1 },
    });
    const changes: SuspensionChange[] = [];
    const warnings: string[] = [];
    const watch = suspensionWatch({
      client,
      exchanges: ['nyse'],
      onChange: (c) => changes.push(c),
      onWarning: (message) => warnings.push(message),
    });
    await vi.waitFor(() => expect(changes.length).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
    sim.addFault({ kind: 'http-5xx', endpoint: 'suspension', times: 1 });
    await vi.waitFor(
      () => expect(sim!.log.count({ endpoint: 'suspension', status: 200 })).toBeGreaterThanOrEqual(5),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    const summary = await watch.stop();
    expect(warnings).toEqual(['suspension poll of nyse failed; retrying at the next poll']);
    expect(changes).toEqual(expectedChanges('nyse', summary.polls, true));
    expect(changes.length).toBeGreaterThan(expectedChanges('nyse', 1, true).length);
  });

  it('ends with the service error when the token is refused', async () => {
    await start(Date.UTC(2026, 0, 6, 15));
    const refused = new QuoteflowClient({
      baseUrl: sim!.url,
      token: 'wrong',
      plan: 'basic',
      clock: client!.clock,
    });
    await expect(
      suspensionWatch({ client: refused, exchanges: ['sse'], onChange: () => undefined }).done,
    ).rejects.toMatchObject({ code: 'QF_UNAUTHORIZED_TOKEN' });
    await refused.close();
  });

  it('refuses bad options when it is built, and polls no faster than once a minute', async () => {
    await start(Date.UTC(2026, 0, 6, 15));
    expect(() => suspensionWatch({ client: client!, exchanges: [] })).toThrowError(
      expect.objectContaining({ code: 'QF_PIPELINE_CONFIG' }),
    );
    expect(() => suspensionWatch({ client: client!, exchanges: ['sse'], intervalMs: -1 })).toThrowError(
      /"intervalMs" must be a positive number of ms, got -1/,
    );
    const watch = suspensionWatch({ client: client!, exchanges: ['sse'], intervalMs: 1_000 });
    await vi.waitFor(() => expect(sim!.log.count({ endpoint: 'suspension' })).toBeGreaterThanOrEqual(3), {
      timeout: 20_000,
      interval: 50,
    });
    const summary = await watch.stop();
    const arrivals = sim!.log
      .entries()
      .filter((e) => e.endpoint === 'suspension')
      .map((e) => e.arrivalMs);
    for (let i = 1; i < arrivals.length; i++)
      expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(60_000);
    // Every query counts as a poll, but the stop may cut off the answer of the last one.
    expect(summary.polls).toBeGreaterThanOrEqual(arrivals.length - 1);
  });
});
