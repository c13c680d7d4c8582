import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import type { SuspensionRecord } from '@quoteflow/core';
import {
  createSuspensionDiffer,
  normalizeSuspension,
  suspensionChanges,
  suspensionKey,
} from './suspension-changes.js';

function rec(over: Partial<SuspensionRecord> = {}): SuspensionRecord {
  return {
    type: 'suspension',
    exchange: 'sse',
    symbol: '600416',
    symbolName: 'Xiangtan Electric',
    haltReason: 'Major asset restructuring',
    haltDate: '2026-11-20',
    haltTime: '09:30:00',
    haltPeriod: 'all day',
    haltDateTime: undefined,
    resumeDate: undefined,
    resumeTime: undefined,
    resumeDateTime: undefined,
    sourceExchange: undefined,
    pauseThresholdPrice: undefined,
    publishDate: '2026-11-19 18:00:00',
    haltAtMs: Date.UTC(2026, 10, 20, 1, 30),
    resumeAtMs: undefined,
    publishAtMs: Date.UTC(2026, 10, 19, 10, 0),
    ...over,
  };
}

describe('normalizeSuspension', () => {
  it('derives UTC instants from exchange-local wall-clock strings and keeps the raw strings', () => {
    const raw = rec({
      haltAtMs: undefined,
      publishAtMs: Number.NaN,
      resumeDate: '2026-11-23',
      resumeTime: '09:30:00',
    });
    const n = normalizeSuspension(raw);
    expect(n.haltAtMs).toBe(Date.UTC(2026, 10, 20, 1, 30)); // 09:30 Asia/Shanghai
    expect(n.resumeAtMs).toBe(Date.UTC(2026, 10, 23, 1, 30));
    expect(n.publishAtMs).toBe(Date.UTC(2026, 10, 19, 10, 0));
    expect([n.haltDate, n.haltTime, n.publishDate]).toEqual([
      '2026-11-20',
      '09:30:00',
      '2026-11-19 18:00:00',
    ]);
  });

  it('reads New York records in America/New_York, preferring the date-time fields', () => {
    const ny = normalizeSuspension(
      rec({
        exchange: 'nyse',
        symbol: ' XYZ ',
        haltDateTime: '2026-11-20 10:15:00',
        haltDate: '2026-11-20',
        haltTime: '',
        haltAtMs: undefined,
        publishDate: '2026-11-20 10:15:30',
        publishAtMs: Number.NaN,
      }),
    );
    expect(ny.symbol).toBe('XYZ');
    expect(ny.haltTime).toBeUndefined(); // empty string → undefined
    expect(ny.haltAtMs).toBe(Date.UTC(2026, 10, 20, 15, 15)); // EST, UTC-5
    expect(ny.publishAtMs).toBe(Date.UTC(2026, 10, 20, 15, 15, 30));
  });
});

describe('createSuspensionDiffer', () => {
  it('emits every record of the first snapshot as new, then only what changed', () => {
    const d = createSuspensionDiffer();
    const a = rec();
    const b = rec({
      symbol: '600000',
      haltAtMs: Date.UTC(2026, 10, 18, 1, 30),
      haltDate: '2026-11-18',
      publishAtMs: Date.UTC(2026, 10, 17, 10, 0),
      publishDate: '2026-11-17 18:00:00',
    });
    // The endpoint sends latest first; changes come out oldest announcement first.
    expect(d.diff([a, b]).map((c) => [c.change, c.record.symbol])).toEqual([
      ['new', '600000'],
      ['new', '600416'],
    ]);
    expect(d.diff([a, b])).toEqual([]);
    const resumed = rec({
      resumeDate: '2026-11-23',
      resumeTime: '09:30:00',
      resumeAtMs: Date.UTC(2026, 10, 23, 1, 30),
    });
    const changes = d.diff([resumed, b]);
    expect(changes).toEqual([
      { type: 'suspension-change', change: 'changed', key: suspensionKey(a), record: resumed, previous: a },
    ]);
    expect(d.diff([b]).map((c) => [c.change, c.record.symbol])).toEqual([['removed', '600416']]);
  });

  it('scopes removal to the exchanges a snapshot covers and ignores an empty snapshot', () => {
    const d = createSuspensionDiffer();
    const sse = rec();
    const nyse = rec({ exchange: 'nyse', symbol: 'XYZ' });
    d.diff([sse]);
    expect(d.diff([nyse]).map((c) => c.change)).toEqual(['new']);
    expect(d.diff([])).toEqual([]);
    expect(d.diff([sse]).map((c) => c.change)).toEqual([]);
  });

  it('keeps two halts of one symbol apart and collapses exact repeats', () => {
    const d = createSuspensionDiffer();
    const first = rec();
    const second = rec({
      haltDate: '2026-11-25',
      haltAtMs: Date.UTC(2026, 10, 25, 1, 30),
      publishDate: '2026-11-24 18:00:00',
      publishAtMs: Date.UTC(2026, 10, 24, 10, 0),
    });
    const out = d.diff([second, first, first]);
    expect(out.map((c) => c.key)).toEqual([suspensionKey(first), suspensionKey(second)]);
    expect(new Set(out.map((c) => c.key)).size).toBe(2);
  });

  it('tells apart records that share a key by publish date', () => {
    const d = createSuspensionDiffer();
    const noHalt = rec({ haltDate: undefined, haltTime: undefined, haltAtMs: undefined });
    const other = rec({
      haltDate: undefined,
      haltTime: undefined,
      haltAtMs: undefined,
      haltReason: 'another',
    });
    const out = d.diff([noHalt, other]);
    expect(out).toHaveLength(2);
    expect(new Set(out.map((c) => c.key)).size).toBe(2);
  });

  it('starts from initial records, or silently from the first snapshot when asked', () => {
    const a = rec();
    expect(createSuspensionDiffer({ initial: [a] }).diff([a])).toEqual([]);
    const quiet = createSuspensionDiffer({ emitInitial: false });
    expect(quiet.diff([a])).toEqual([]);
    expect(quiet.diff([a, rec({ symbol: '1' })]).map((c) => c.change)).toEqual(['new']);
  });
});

describe('suspensionChanges', () => {
  const run = (fn: Parameters<TestScheduler['run']>[0]) =>
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(fn);
  const a = rec();

  it('emits changes per snapshot, forwards completion and errors, and starts fresh per subscription', () => {
    run(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold('x-x-y|', { x: [a], y: [] as SuspensionRecord[] });
      const changes = src.pipe(suspensionChanges());
      expectObservable(changes).toBe('n----|', {
        n: {
          type: 'suspension-change',
          change: 'new',
          key: suspensionKey(a),
          record: a,
          previous: undefined,
        },
      });
      expectObservable(changes, '^-!').toBe('n--', { n: expect.objectContaining({ change: 'new' }) });
      expectObservable(cold<SuspensionRecord[]>('|').pipe(suspensionChanges())).toBe('|');
      expectObservable(cold<SuspensionRecord[]>('-').pipe(suspensionChanges())).toBe('-');
      expectObservable(cold('x#', { x: [a] }).pipe(suspensionChanges())).toBe('n#', {
        n: expect.objectContaining({ change: 'new' }),
      });
      expectSubscriptions(src.subscriptions).toBe(['^----!', '^-!']);
    });
  });

  it('errors the output when a record cannot be normalised', () => {
    run(({ cold, expectObservable }) => {
      const broken = { ...a, exchange: 'nowhere' } as unknown as SuspensionRecord;
      expectObservable(cold('x', { x: [broken] }).pipe(suspensionChanges())).toBe(
        '#',
        {},
        expect.objectContaining({ code: 'QF_DECODE', path: 'exchange' }),
      );
    });
  });
});
