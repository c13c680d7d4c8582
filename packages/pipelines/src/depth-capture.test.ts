import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuoteflowClient, acceleratedClock, type Clock, type DepthTick } from '@quoteflow/core';
import { UnreachableServiceError } from '@quoteflow/core/internal';
import { closedAddress } from '../../sinks/test-support/closed-address.js';
import type { KafkaDriverFactory, KafkaMessage } from '@quoteflow/sinks';
import { defaultCatalogue, startSimulator, type Simulator } from '@quoteflow/simulator';
import { depthCapture } from './depth-capture.js';

const TOKEN = 'pipelines-depth-capture-token';
/** A Sunday: US stocks are closed, so AAPL.US's book stays frozen (its `seq` repeats every poll). */
const SUNDAY_MS = Date.UTC(2026, 0, 4, 12);
let sim: Simulator;
let dir: string;
let client: QuoteflowClient;
/** One clock for the simulator and the pipeline: market time at 10x for both. */
let clock: Clock;

beforeAll(async () => {
  clock = acceleratedClock({ speed: 10, startMs: SUNDAY_MS });
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional' },
    seed: 11,
    clock,
    // ETHUSDT with no levels: most of its books have both sides empty.
    products: defaultCatalogue().map((p) => (p.code === 'ETHUSDT' ? { ...p, depthLevels: 0 } : p)),
  });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  // Each test has a client of its own, whose scheduler knows nothing of the previous test's requests.
  sim.resetLimits();
  dir = await mkdtemp(join(tmpdir(), 'qf-depth-capture-'));
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
});
afterEach(async () => {
  expect(sim.log.refused()).toEqual([]);
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

/** An http:// URL where nothing listens. */
const closedUrl = async (): Promise<string> => `http://${await closedAddress()}`;

interface Row {
  code: string;
  seq: string;
  bids: unknown[];
  asks: unknown[];
}

async function depthFiles(): Promise<string[]> {
  const root = join(dir, 'depth');
  if (!existsSync(root)) return [];
  return (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && !e.parentPath.includes('_delta_log'))
    .map((e) => join(e.parentPath, e.name));
}

async function rows(): Promise<Row[]> {
  const out: Row[] = [];
  for (const f of await depthFiles())
    for (const line of (await readFile(f, 'utf8')).split('\n'))
      if (line.trim() !== '') out.push(JSON.parse(line) as Row);
  return out;
}

/** A Kafka driver that keeps every message in memory (or refuses every batch with `refuse`). */
function memoryDriver(sent: KafkaMessage[], refuse?: Error): KafkaDriverFactory {
  return () => ({
    name: 'memory',
    connect: () => Promise.resolve(),
    ensureTopics: () => Promise.resolve(),
    send: async (messages) => {
      await new Promise((resolve) => setImmediate(resolve));
      if (refuse !== undefined) throw refuse;
      sent.push(...messages);
    },
    close: () => Promise.resolve(),
  });
}

describe('depthCapture', () => {
  it('writes each book once per seq, drops a repeated seq, keeps empty sides, and flushes on stop', async () => {
    const seen: DepthTick[] = [];
    const capture = depthCapture({
      client,
      codes: ['BTCUSDT', 'ETHUSDT', 'AAPL.US'],
      // Files finish only on stop here, so what lands on disk is the stop's flush.
      files: { dir, format: 'ndjson', maxFileAgeMs: 3_600_000 },
      onTick: (t) => seen.push(t),
    });
    await vi.waitFor(
      () => {
        expect(seen.filter((t) => t.code === 'ETHUSDT').length).toBeGreaterThanOrEqual(5);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(await depthFiles()).toEqual([]);
    const summary = await capture.stop();

    const written = await rows();
    expect(summary.files.length).toBeGreaterThan(0);
    expect(summary.fileCount).toBe(summary.files.length);
    expect(summary.ticks).toBe(seen.length);
    expect(written).toHaveLength(summary.ticks);
    expect(new Set(written.map((r) => `${r.code}#${r.seq}`)).size).toBe(written.length);
    // The frozen book: polled every time, written once.
    expect(written.filter((r) => r.code === 'AAPL.US')).toHaveLength(1);
    expect(summary.polls).toBeGreaterThanOrEqual(2);
    expect(summary.repeated).toBeGreaterThanOrEqual(summary.polls - 1);
    expect(written.some((r) => r.code === 'ETHUSDT' && r.bids.length === 0 && r.asks.length === 0)).toBe(
      true,
    );
    // Crypto and stock codes go in one request per family.
    expect(sim.log.count({ endpoint: 'depth-tick' })).toBeGreaterThanOrEqual(2 * summary.polls);
  });

  it('produces every new tick to <prefix>.depth once, acknowledged before done resolves', async () => {
    const sent: KafkaMessage[] = [];
    const capture = depthCapture({
      client,
      codes: ['BTCUSDT', 'AAPL.US'],
      kafka: { brokers: '127.0.0.1:9092', topicPrefix: 'qft-depth', driver: memoryDriver(sent) },
    });
    await vi.waitFor(() => expect(sent.length).toBeGreaterThanOrEqual(3), { timeout: 20_000, interval: 50 });
    const summary = await capture.stop();
    expect(sent).toHaveLength(summary.ticks);
    expect(sent.every((m) => m.topic === 'qft-depth.depth')).toBe(true);
    const ids = sent.map((m) => {
      const value = JSON.parse(m.value.toString()) as { code: string; seq: string };
      expect(m.key).toBe(value.code);
      return `${value.code}#${value.seq}`;
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id.startsWith('AAPL.US#'))).toHaveLength(1);
  });

  it('rejects done naming the Kafka sink when it fails, after the files sink flushed', async () => {
    const capture = depthCapture({
      client,
      codes: ['BTCUSDT'],
      files: { dir, format: 'ndjson', maxFileAgeMs: 3_600_000 },
      kafka: {
        brokers: '127.0.0.1:9092',
        driver: memoryDriver([], new Error('broker says no')),
      },
    });
    const err = await capture.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'PipelineError', code: 'QF_PIPELINE' });
    expect((err as Error).message).toMatch(/^depthCapture: the Kafka sink failed: .*broker says no/);
    expect((err as Error).cause).toMatchObject({ code: 'QF_KAFKA_DELIVERY' });
    expect((await rows()).length).toBeGreaterThan(0);
  });

  it('rejects done naming the files sink when it cannot write, before any request', async () => {
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, '');
    let ticks = 0;
    const polled = sim.log.count({ endpoint: 'depth-tick' });
    const capture = depthCapture({
      client,
      codes: ['BTCUSDT'],
      files: { dir: join(blocker, 'data'), format: 'ndjson', maxFileAgeMs: 3_600_000 },
      onTick: () => ticks++,
    });
    // Its claim in the table (a commit) fails before the first poll.
    await expect(capture.done).rejects.toMatchObject({
      code: 'QF_PIPELINE',
      message: expect.stringMatching(/^depthCapture: the files sink failed/) as unknown,
    });
    expect(ticks).toBe(0);
    expect(sim.log.count({ endpoint: 'depth-tick' })).toBe(polled);
  });

  it('reports a transient poll failure as a warning and polls again', async () => {
    const fragile = new QuoteflowClient({
      baseUrl: sim.url,
      token: TOKEN,
      plan: 'professional',
      clock,
      retry: { maxAttempts: 1 },
    });
    sim.addFault({ kind: 'http-5xx', endpoint: 'depth-tick', times: 1 });
    const warnings: string[] = [];
    const seen: DepthTick[] = [];
    const capture = depthCapture({
      client: fragile,
      codes: ['BTCUSDT'],
      onTick: (t) => seen.push(t),
      onWarning: (message) => warnings.push(message),
    });
    await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 50 });
    const summary = await capture.stop();
    await fragile.close();
    expect(warnings).toEqual(['depth poll failed; retrying at the next interval']);
    expect(summary.ticks).toBe(seen.length);
  });

  it("ends at once when nothing has ever answered at the client's address (a wrong base URL), polling no further", async () => {
    const nowhere = new QuoteflowClient({
      baseUrl: await closedUrl(),
      token: TOKEN,
      plan: 'professional',
      clock,
    });
    const warnings: string[] = [];
    await expect(
      depthCapture({
        client: nowhere,
        codes: ['BTCUSDT'],
        onTick: () => undefined,
        onWarning: (message) => warnings.push(message),
      }).done,
    ).rejects.toBeInstanceOf(UnreachableServiceError);
    expect(warnings).toEqual([]);
    await nowhere.close();
  });

  it('ends with the service error when a code is unknown or the token is refused', async () => {
    await expect(
      depthCapture({ client, codes: ['NOPE.US'], onTick: () => undefined }).done,
    ).rejects.toMatchObject({ code: 'QF_INVALID_CODE' });
    const refused = new QuoteflowClient({ baseUrl: sim.url, token: 'wrong', plan: 'professional', clock });
    await expect(
      depthCapture({ client: refused, codes: ['BTCUSDT'], onTick: () => undefined }).done,
    ).rejects.toMatchObject({ code: 'QF_UNAUTHORIZED_TOKEN' });
    await refused.close();
  });

  it('ends normally when its signal aborts, even before the first answer', async () => {
    const controller = new AbortController();
    controller.abort();
    const summary = await depthCapture({
      client,
      codes: ['BTCUSDT'],
      onTick: () => undefined,
      signal: controller.signal,
    }).done;
    expect(summary).toEqual({ polls: 0, ticks: 0, repeated: 0, files: [], fileCount: 0 });
  });

  it('refuses bad options when it is built', () => {
    expect(() => depthCapture({ client, codes: [], onTick: () => undefined })).toThrowError(
      expect.objectContaining({ code: 'QF_PIPELINE_CONFIG' }),
    );
    expect(() => depthCapture({ client, codes: ['BTCUSDT'] })).toThrowError(
      /give "files", "kafka" or "onTick"/,
    );
    expect(() =>
      depthCapture({ client, codes: ['BTCUSDT'], intervalMs: Number.NaN, onTick: () => undefined }),
    ).toThrowError(/"intervalMs" must be a positive number of ms, got null/);
  });
});
