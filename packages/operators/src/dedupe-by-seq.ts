import { Observable } from 'rxjs';
import type { MonoTypeOperatorFunction } from 'rxjs';
import { invalidOption } from './internal/invalid-option.js';

/** What {@link dedupeBySeq} needs of a tick; core's `DepthTick` has it. */
export interface SeqTick {
  readonly code: string;
  readonly seq: bigint | undefined;
  readonly tickTimeMs: number | undefined;
}

/** How to treat a tick without `seq`. */
export const WITHOUT_SEQ_POLICIES = ['tick-time', 'pass', 'drop'] as const;
export type WithoutSeqPolicy = (typeof WITHOUT_SEQ_POLICIES)[number];

/** Options of {@link dedupeBySeq} and {@link createSeqDeduper}. */
export interface DedupeBySeqOptions {
  /**
   * Memory bound: the most codes remembered. When the number of remembered codes reaches this,
   * the least recently *seen* half is forgotten (two-generation LRU); a forgotten code's next
   * tick is accepted as if it were the first.
   * @defaultValue 100_000 codes
   */
  readonly maxCodes?: number;
  /**
   * A tick whose `seq` is at most `lastSeq / resetDivisor` and whose `tickTimeMs` is later than
   * the last accepted tick's is a sequence reset (the upstream restarted its counter): it is
   * accepted and becomes the new baseline.
   * @defaultValue 2n (seq fell to half or less)
   */
  readonly resetDivisor?: bigint;
  /**
   * A tick without `seq`: `tick-time` keeps it when its `tickTimeMs` is later than the last
   * accepted tick's of that code (and keeps it when neither has a time: nothing to compare);
   * `pass` always keeps it; `drop` always drops it.
   * @defaultValue 'tick-time'
   */
  readonly withoutSeq?: WithoutSeqPolicy;
}

/** Defaults of {@link DedupeBySeqOptions}. */
export const DEDUPE_BY_SEQ_DEFAULTS = {
  maxCodes: 100_000,
  resetDivisor: 2n,
  withoutSeq: 'tick-time',
} as const satisfies Required<DedupeBySeqOptions>;

interface Last {
  seq: bigint | undefined;
  tickTimeMs: number | undefined;
}

/** The plain state machine behind {@link dedupeBySeq}. */
export interface SeqDeduper {
  /** Whether `tick` is new (and, if so, records it as the last one of its code). */
  accept(tick: SeqTick): boolean;
  /** How many codes are remembered now. */
  readonly size: number;
}

/**
 * Creates the state machine behind {@link dedupeBySeq}, for use without RxJS.
 *
 * @example
 * ```ts
 * const deduper = createSeqDeduper();
 * const fresh = ticks.filter((t) => deduper.accept(t));
 * ```
 */
export function createSeqDeduper(options: DedupeBySeqOptions = {}): SeqDeduper {
  const maxCodes = options.maxCodes ?? DEDUPE_BY_SEQ_DEFAULTS.maxCodes;
  const resetDivisor = options.resetDivisor ?? DEDUPE_BY_SEQ_DEFAULTS.resetDivisor;
  const withoutSeq = options.withoutSeq ?? DEDUPE_BY_SEQ_DEFAULTS.withoutSeq;
  if (!Number.isInteger(maxCodes) || maxCodes < 2) {
    invalidOption('maxCodes', `dedupeBySeq: "maxCodes" must be an integer >= 2, got ${String(maxCodes)}`);
  }
  if (typeof resetDivisor !== 'bigint' || resetDivisor < 1n) {
    invalidOption('resetDivisor', `dedupeBySeq: "resetDivisor" must be a bigint >= 1n, got ${String(resetDivisor)}`);
  }
  if (!(WITHOUT_SEQ_POLICIES as readonly string[]).includes(withoutSeq)) {
    invalidOption('withoutSeq', `dedupeBySeq: "withoutSeq" must be one of ${WITHOUT_SEQ_POLICIES.join(', ')}, got ${String(withoutSeq)}`);
  }
  const generationSize = Math.floor(maxCodes / 2);
  // Two generations: lookups hit `current` first; when it fills up, it becomes `previous` and the
  // old `previous` (codes not seen for a whole generation) is dropped. O(1) per tick, no reordering.
  let current = new Map<string, Last>();
  let previous = new Map<string, Last>();

  const lookup = (code: string): Last | undefined => {
    const hit = current.get(code);
    if (hit !== undefined) return hit;
    const old = previous.get(code);
    if (old !== undefined) {
      previous.delete(code);
      remember(code, old);
    }
    return old;
  };
  const remember = (code: string, last: Last): void => {
    if (current.size >= generationSize) {
      previous = current;
      current = new Map();
    }
    current.set(code, last);
  };

  return {
    get size() {
      return current.size + previous.size;
    },
    accept(tick) {
      const seq = tick.seq;
      const last = lookup(tick.code);
      if (seq === undefined) {
        if (withoutSeq === 'pass') return true;
        if (withoutSeq === 'drop') return false;
        const t = tick.tickTimeMs;
        if (last === undefined) {
          remember(tick.code, { seq: undefined, tickTimeMs: t });
          return true;
        }
        if (t === undefined || last.tickTimeMs === undefined) {
          if (t !== undefined || last.tickTimeMs !== undefined) {
            // One side has a time and the other has not: nothing to compare, keep and record.
            last.tickTimeMs = t;
          }
          return true;
        }
        if (t <= last.tickTimeMs) return false;
        last.tickTimeMs = t;
        return true;
      }
      if (last === undefined) {
        remember(tick.code, { seq, tickTimeMs: tick.tickTimeMs });
        return true;
      }
      if (last.seq === undefined || seq > last.seq) {
        last.seq = seq;
        if (tick.tickTimeMs !== undefined) last.tickTimeMs = tick.tickTimeMs;
        return true;
      }
      const t = tick.tickTimeMs;
      if (t !== undefined && last.tickTimeMs !== undefined && t > last.tickTimeMs && seq <= last.seq / resetDivisor) {
        // A much smaller seq with a later quote time: the upstream counter restarted.
        last.seq = seq;
        last.tickTimeMs = t;
        return true;
      }
      return false;
    },
  };
}

/**
 * Per product code, drops ticks whose `seq` (a bigint) is not greater than the last accepted one,
 * so polling `/depth-tick` faster than the book changes writes each book once. A sequence reset
 * (a `seq` of at most half the last one, with a later `tickTimeMs`) is accepted and becomes the
 * new baseline. Memory is bounded by `maxCodes` (two-generation LRU). Ticks without `seq` follow
 * `withoutSeq` (default: compared by `tickTimeMs`).
 *
 * Order is kept; error and completion are forwarded; state is per subscription.
 *
 * @param options - see {@link DedupeBySeqOptions}; invalid options throw `QF_INVALID_OPTION` here.
 * @example
 * ```ts
 * depth$.pipe(dedupeBySeq({ maxCodes: 10_000 })).subscribe(write);
 * ```
 */
export function dedupeBySeq<T extends SeqTick>(options: DedupeBySeqOptions = {}): MonoTypeOperatorFunction<T> {
  createSeqDeduper(options); // validate options when the operator is built
  return (source) =>
    new Observable<T>((subscriber) => {
      const deduper = createSeqDeduper(options);
      return source.subscribe({
        next: (tick) => {
          if (deduper.accept(tick)) subscriber.next(tick);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
