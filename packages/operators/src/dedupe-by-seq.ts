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
    invalidOption(
      'resetDivisor',
      `dedupeBySeq: "resetDivisor" must be a bigint >= 1n, got ${String(resetDivisor)}`,
    );
  }
  if (!(WITHOUT_SEQ_POLICIES as readonly string[]).includes(withoutSeq)) {
    invalidOption(
      'withoutSeq',
      `dedupeBySeq: "withoutSeq" must be one of ${WITHOUT_SEQ_POLICIES.join(', ')}, got ${String(withoutSeq)}`,
    );
  }
  return new GenerationalSeqDeduper(Math.floor(maxCodes / 2), resetDivisor, withoutSeq);
}

/**
 * Two generations of codes: lookups hit `current` first; when it fills up it becomes `previous`,
 * and the old `previous` (codes not seen for a whole generation) is dropped. O(1) per tick with no
 * reordering. A class, because V8 optimises its field accesses better than closure variables.
 */
class GenerationalSeqDeduper implements SeqDeduper {
  private current = new Map<string, Last>();
  private previous = new Map<string, Last>();
  constructor(
    private readonly generationSize: number,
    private readonly resetDivisor: bigint,
    private readonly withoutSeq: WithoutSeqPolicy,
  ) {}

  get size(): number {
    return this.current.size + this.previous.size;
  }

  accept(tick: SeqTick): boolean {
    const code = tick.code;
    const last = this.current.get(code) ?? this.promote(code);
    const seq = tick.seq;
    if (seq === undefined || last === undefined || last.seq === undefined) return this.slowAccept(tick, last);
    const t = tick.tickTimeMs;
    if (seq > last.seq) {
      last.seq = seq;
      if (t !== undefined) last.tickTimeMs = t;
      return true;
    }
    if (
      t !== undefined &&
      last.tickTimeMs !== undefined &&
      t > last.tickTimeMs &&
      seq <= last.seq / this.resetDivisor
    ) {
      // A much smaller seq with a later quote time: the upstream counter restarted.
      last.seq = seq;
      last.tickTimeMs = t;
      return true;
    }
    return false;
  }

  private promote(code: string): Last | undefined {
    const old = this.previous.get(code);
    if (old !== undefined) {
      this.previous.delete(code);
      this.remember(code, old);
    }
    return old;
  }

  private remember(code: string, last: Last): void {
    if (this.current.size >= this.generationSize) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(code, last);
  }

  private slowAccept(tick: SeqTick, last: Last | undefined): boolean {
    const seq = tick.seq;
    const t = tick.tickTimeMs;
    if (seq === undefined) {
      if (this.withoutSeq === 'pass') return true;
      if (this.withoutSeq === 'drop') return false;
      if (last === undefined) {
        this.remember(tick.code, { seq: undefined, tickTimeMs: t });
        return true;
      }
      // Nothing to compare when either side has no time: keep it, and record its time.
      if (t !== undefined && last.tickTimeMs !== undefined && t <= last.tickTimeMs) return false;
      last.tickTimeMs = t;
      return true;
    }
    if (last === undefined) {
      this.remember(tick.code, { seq, tickTimeMs: t });
      return true;
    }
    // last.seq is undefined: the code so far only had ticks without seq.
    last.seq = seq;
    if (t !== undefined) last.tickTimeMs = t;
    return true;
  }
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
export function dedupeBySeq<T extends SeqTick>(
  options: DedupeBySeqOptions = {},
): MonoTypeOperatorFunction<T> {
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
