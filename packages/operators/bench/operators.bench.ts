/**
 * Events per second of dedupeBySeq, mergeBars and resampleBars, each against a plain loop doing
 * the same work on the same input in the same process (the baseline), through both the plain
 * state machine and the RxJS operator. Target: operator >= 0.5 x the plain loop.
 *
 * Run: `pnpm bench operators` (builds first; this file imports the built package).
 */
import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import type { Bar, BarUpdate, DepthTick } from '@quoteflow/core';
import {
  createBarMerger,
  createBarResampler,
  createSeqDeduper,
  dedupeBySeq,
  mergeBars,
  resampleBars,
} from '@quoteflow/operators';
import type { MergeBarsOutput } from '@quoteflow/operators';

const MIN = 60_000;
const ROUNDS = 40;
const WARMUP_ROUNDS = 5;

/**
 * Wall time of one run of `fn` in ms. No forced `gc()` between runs: a forced full collection
 * throws away type feedback and optimised code, which penalises the larger state machines far
 * more than a tiny loop, so it measures re-optimisation rather than steady-state speed.
 */
function once(fn: () => number): { ms: number; out: number } {
  const t = process.hrtime.bigint();
  const out = fn();
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, out };
}

/**
 * Every variant hands each output to this sink, so that no variant's output objects can be
 * optimised away (a loop whose objects never escape would otherwise win by not building them).
 */
const ring: unknown[] = new Array<unknown>(1024);
let consumed = 0;
function consume(out: unknown): void {
  ring[consumed++ & 1023] = out;
}

/** A source that pushes `items` synchronously, the cheapest possible Observable. */
function arraySource<T>(items: readonly T[]): Observable<T> {
  return new Observable<T>((s) => {
    for (let i = 0; i < items.length && !s.closed; i++) s.next(items[i] as T);
    s.complete();
  });
}

function viaOperator<I, O>(items: readonly I[], op: OperatorFunction<I, O>): number {
  const start = consumed;
  const sub = arraySource(items).pipe(op).subscribe(consume);
  sub.unsubscribe();
  return consumed - start;
}

interface Row {
  name: string;
  events: number;
  outputs: number[];
  loop: number;
  machine: number;
  operator: number;
}

// ---- dedupe -------------------------------------------------------------------------------

function dedupeInput(codes: number, events: number): DepthTick[] {
  const seq = new Array<bigint>(codes).fill(1_000_000n);
  const out: DepthTick[] = [];
  for (let i = 0; i < events; i++) {
    const c = (i * 7919) % codes;
    // About half the polls see an unchanged book (same seq), as when polling faster than it changes.
    if ((i * 31) % 2 === 0) seq[c] = (seq[c] as bigint) + 1n;
    out.push({
      type: 'depth',
      code: `C${c}`,
      seq: seq[c] as bigint,
      tickTimeMs: 1_700_000_000_000 + i,
      bids: [],
      asks: [],
    });
  }
  return out;
}

function dedupeLoop(ticks: readonly DepthTick[]): number {
  // The same work: last seq and quote time per code, and the reset rule (half the seq, later time).
  const last = new Map<string, { seq: bigint; t: number | undefined }>();
  const start = consumed;
  for (const tick of ticks) {
    const s = tick.seq;
    if (s === undefined) continue;
    const prev = last.get(tick.code);
    if (prev === undefined) {
      last.set(tick.code, { seq: s, t: tick.tickTimeMs });
    } else if (s > prev.seq) {
      prev.seq = s;
      if (tick.tickTimeMs !== undefined) prev.t = tick.tickTimeMs;
    } else if (
      tick.tickTimeMs !== undefined &&
      prev.t !== undefined &&
      tick.tickTimeMs > prev.t &&
      s * 2n <= prev.seq
    ) {
      prev.seq = s;
      prev.t = tick.tickTimeMs;
    } else continue;
    consume(tick);
  }
  return consumed - start;
}

// ---- merge --------------------------------------------------------------------------------

/**
 * `/batch-kline`-like polling: every poll is one answer with the latest 2 bars of every series
 * (so the older one is proven final by the newer one in the same answer); a new minute every 5 polls.
 */
function mergeInput(codes: number, polls: number): Bar[] {
  const m0 = Math.floor(Date.now() / MIN) * MIN + 60 * MIN;
  const out: Bar[] = [];
  for (let p = 0; p < polls; p++) {
    const m = m0 + Math.floor(p / 5) * MIN;
    const readAtMs = m0 + p * 1_000;
    const receivedAtMs = readAtMs + 1;
    for (let c = 0; c < codes; c++) {
      const code = `C${c}`;
      const prev = 100 + c;
      out.push({
        type: 'bar',
        code,
        klineType: 1,
        tsMs: m - MIN,
        open: prev,
        high: prev + 5,
        low: prev - 5,
        close: prev,
        volume: 10,
        turnover: 1000,
        readAtMs,
        receivedAtMs,
      });
      const close = 100 + c + (p % 5);
      out.push({
        type: 'bar',
        code,
        klineType: 1,
        tsMs: m,
        open: 100,
        high: close + 10,
        low: 90,
        close,
        volume: 10 + (p % 5),
        turnover: 1000,
        readAtMs,
        receivedAtMs,
      });
    }
  }
  return out;
}

function mergeLoop(bars: readonly Bar[]): number {
  // The same work for this input: validate, upsert the forming bar per series, close it when a
  // newer bar appears, drop older bars, emit an update object per change.
  const series = new Map<
    string,
    { forming: Bar | undefined; closedTs: number; rev: number; deadline: number }
  >();
  const start = consumed;
  const emit = (b: Bar, final: boolean, revision: number): void => {
    const u: BarUpdate = {
      type: 'bar-update',
      code: b.code,
      klineType: b.klineType,
      tsMs: b.tsMs,
      open: b.open,
      high: b.high,
      low: b.low,
      close: b.close,
      volume: b.volume,
      turnover: b.turnover,
      readAtMs: b.readAtMs,
      receivedAtMs: b.receivedAtMs,
      final,
      revision,
    };
    consume(u);
  };
  for (const b of bars) {
    if (!(b.tsMs >= 1e11) || !(b.low <= b.open && b.low <= b.close && b.high >= b.open && b.high >= b.close))
      continue;
    let s = series.get(b.code);
    if (s === undefined) {
      s = { forming: undefined, closedTs: -Infinity, rev: 0, deadline: 0 };
      series.set(b.code, s);
    }
    const f = s.forming;
    if (f !== undefined && b.tsMs === f.tsMs) {
      if (
        f.close !== b.close ||
        f.volume !== b.volume ||
        f.high !== b.high ||
        f.low !== b.low ||
        f.open !== b.open ||
        f.turnover !== b.turnover
      ) {
        s.forming = b;
        emit(b, false, s.rev++);
      }
    } else if (f !== undefined ? b.tsMs > f.tsMs : b.tsMs > s.closedTs) {
      if (f !== undefined) {
        emit(f, true, s.rev);
        s.closedTs = f.tsMs;
      }
      s.forming = b;
      s.rev = 0;
      s.deadline = Math.floor(b.tsMs / MIN) * MIN + MIN + 15_000;
      emit(b, false, s.rev++);
    }
  }
  return consumed - start;
}

// ---- resample -----------------------------------------------------------------------------

function resampleInput(codes: number, minutes: number): Bar[] {
  const t0 = 1_700_000_000_000 - (1_700_000_000_000 % (5 * MIN));
  const out: Bar[] = [];
  for (let m = 0; m < minutes; m++) {
    for (let c = 0; c < codes; c++) {
      const px = 100 + ((m * 13 + c) % 17);
      out.push({
        type: 'bar',
        code: `C${c}`,
        klineType: 1,
        tsMs: t0 + m * MIN,
        open: px,
        high: px + 2,
        low: px - 1,
        close: px + 1,
        volume: 5,
        turnover: 500,
        readAtMs: 0,
        receivedAtMs: 0,
      });
    }
  }
  return out;
}

function resampleLoop(bars: readonly Bar[]): number {
  const P = 5 * MIN;
  const agg = new Map<
    string,
    {
      start: number;
      open: number;
      high: number;
      low: number;
      close: number;
      volume: number;
      turnover: number;
      count: number;
    }
  >();
  const start = consumed;
  const emit = (
    code: string,
    a: {
      start: number;
      open: number;
      high: number;
      low: number;
      close: number;
      volume: number;
      turnover: number;
      count: number;
    },
  ): void => {
    const r = {
      type: 'resampled-bar',
      code,
      tsMs: a.start,
      endMs: a.start + P,
      open: a.open,
      high: a.high,
      low: a.low,
      close: a.close,
      volume: a.volume,
      turnover: a.turnover,
      sourceCount: a.count,
      partial: a.count < 5,
      final: true,
    };
    consume(r);
  };
  for (const b of bars) {
    const start = Math.floor(b.tsMs / P) * P;
    let a = agg.get(b.code);
    if (a !== undefined && a.start !== start && a.count > 0) {
      emit(b.code, a);
      a.count = 0;
    }
    if (a === undefined) {
      a = { start, open: b.open, high: b.high, low: b.low, close: b.close, volume: 0, turnover: 0, count: 0 };
      agg.set(b.code, a);
    }
    if (a.count === 0) {
      a.start = start;
      a.open = b.open;
      a.high = b.high;
      a.low = b.low;
      a.volume = 0;
      a.turnover = 0;
    }
    if (b.high > a.high) a.high = b.high;
    if (b.low < a.low) a.low = b.low;
    a.close = b.close;
    a.volume += b.volume ?? 0;
    a.turnover += b.turnover ?? 0;
    a.count++;
    if (a.count === 5) {
      emit(b.code, a);
      a.count = 0;
    }
  }
  return consumed - start;
}

// ---- run ----------------------------------------------------------------------------------

/**
 * Runs the three variants in turn, ROUNDS times after WARMUP_ROUNDS, and keeps each one's best time:
 * interleaving spreads the noise of a shared machine evenly over the variants.
 */
function measure(
  name: string,
  events: number,
  loop: () => number,
  machine: () => number,
  operator: () => number,
): Row {
  const variants = [loop, machine, operator];
  const best = [Infinity, Infinity, Infinity];
  let outputs = variants.map((fn) => fn());
  // Warm-up rounds let the JIT settle on every variant before anything is timed.
  for (let r = 0; r < WARMUP_ROUNDS; r++) outputs = variants.map((fn) => fn());
  for (let r = 0; r < ROUNDS; r++) {
    variants.forEach((fn, i) => {
      const { ms, out } = once(fn);
      best[i] = Math.min(best[i] as number, ms);
      outputs[i] = out;
    });
  }
  const rate = (ms: number) => (events / ms) * 1000;
  return {
    name,
    events,
    outputs,
    loop: rate(best[0] as number),
    machine: rate(best[1] as number),
    operator: rate(best[2] as number),
  };
}

const ticks = dedupeInput(1_000, 200_000);
const mergeBarsIn = mergeInput(1_000, 100);
const resampleIn = resampleInput(1_000, 200);

const rows: Row[] = [
  measure(
    'dedupeBySeq',
    ticks.length,
    () => dedupeLoop(ticks),
    () => {
      const d = createSeqDeduper();
      const start = consumed;
      for (const t of ticks) if (d.accept(t)) consume(t);
      return consumed - start;
    },
    () => viaOperator(ticks, dedupeBySeq()),
  ),
  measure(
    'mergeBars',
    mergeBarsIn.length,
    () => mergeLoop(mergeBarsIn),
    () => {
      const merger = createBarMerger();
      const start = consumed;
      for (const b of mergeBarsIn) merger.push(b, consume);
      return consumed - start;
    },
    () => viaOperator<Bar, MergeBarsOutput>(mergeBarsIn, mergeBars()),
  ),
  measure(
    'resampleBars (1m to 5m)',
    resampleIn.length,
    () => resampleLoop(resampleIn),
    () => {
      const r = createBarResampler({ to: 2, emit: 'final' });
      const start = consumed;
      for (const b of resampleIn) r.push(b, consume);
      return consumed - start;
    },
    () => viaOperator(resampleIn, resampleBars({ to: 2, emit: 'final' })),
  ),
];

const fmt = (x: number) => `${(x / 1e6).toFixed(2)} M/s`;
console.log(
  `Node ${process.version}; best of ${ROUNDS} interleaved runs per variant, same process, same input; ratio = variant / plain loop.\n`,
);
console.log(
  '| operator | events | outputs (loop / machine / operator) | plain loop | state machine (ratio) | RxJS operator (ratio) | target >= 0.5 |',
);
console.log('|---|---:|---|---:|---:|---:|---|');
let failed = false;
for (const r of rows) {
  const rm = r.machine / r.loop;
  const ro = r.operator / r.loop;
  if (r.outputs[0] !== r.outputs[1] || r.outputs[1] !== r.outputs[2]) failed = true;
  console.log(
    `| ${r.name} | ${r.events.toLocaleString('en-US')} | ${r.outputs.join(' / ')} | ${fmt(r.loop)} | ${fmt(r.machine)} (${rm.toFixed(2)}) | ${fmt(r.operator)} (${ro.toFixed(2)}) | ${ro >= 0.5 ? 'met' : 'missed'} |`,
  );
}
if (failed) {
  console.error(
    '\noperators.bench: the baseline and the operators disagree on the number of outputs; the comparison is void',
  );
  process.exitCode = 1;
}
