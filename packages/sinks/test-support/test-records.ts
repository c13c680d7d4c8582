import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bar, BarUpdate, DepthTick, Level, SuspensionRecord } from '@quoteflow/core';
import { DatasetWriter } from '../src/files/dataset-writer.js';

/** Test helpers: domain records with every key present (core's convention). */
export function bar(code: string, tsMs: number, over: Partial<Bar> = {}): Bar {
  return {
    type: 'bar',
    code,
    klineType: 1,
    tsMs,
    open: 10,
    high: 11,
    low: 9.5,
    close: 10.5,
    volume: 1000,
    turnover: 10500,
    readAtMs: tsMs + 30_000,
    receivedAtMs: tsMs + 30_120,
    ...over,
  };
}

export function barUpdate(code: string, tsMs: number, final: boolean): BarUpdate {
  return { ...bar(code, tsMs), type: 'bar-update', final, revision: final ? 1 : 0 };
}

export function level(price: number, volume: number | undefined): Level {
  return {
    price,
    volume,
    priceRaw: String(price),
    volumeRaw: volume === undefined ? undefined : String(volume),
  };
}

export function depth(
  code: string,
  seq: bigint | undefined,
  tickTimeMs: number | undefined,
  bids: Level[],
  asks: Level[],
): DepthTick {
  return { type: 'depth', code, seq, tickTimeMs, bids, asks };
}

export function suspension(symbol: string, over: Partial<SuspensionRecord> = {}): SuspensionRecord {
  return {
    type: 'suspension',
    exchange: 'nyse',
    symbol,
    symbolName: undefined,
    haltReason: undefined,
    haltDate: undefined,
    haltTime: undefined,
    haltPeriod: undefined,
    haltDateTime: undefined,
    resumeDate: undefined,
    resumeTime: undefined,
    resumeDateTime: undefined,
    sourceExchange: undefined,
    pauseThresholdPrice: undefined,
    publishDate: '2026-01-05 08:00:00',
    haltAtMs: undefined,
    resumeAtMs: undefined,
    publishAtMs: Date.UTC(2026, 0, 5, 13),
    ...over,
  };
}

/**
 * Starts the shared encoder thread (wasm compile: seconds on a loaded machine), for a test
 * file's `beforeAll`, so no single test pays it inside its time limit.
 */
export async function warmEncoderThread(): Promise<void> {
  const warm = await mkdtemp(join(tmpdir(), 'qf-warm-'));
  try {
    const w = new DatasetWriter({ dir: warm, encoderThreads: 1 });
    w.append(bar('WARM', 0));
    await w.close();
  } finally {
    await rm(warm, { recursive: true, force: true });
  }
}
