import { BehaviorSubject, Observable, Subject, filter, map, tap, type Subscription } from 'rxjs';
import type { Bar, BarUpdate, KlineType } from '@quoteflow/core';
import { resampleBars, yesterdayClose, type ResampledBar, type YesterdayClose } from '@quoteflow/operators';
import { klineMessageValue } from '@quoteflow/sinks/internal';
import { resampledTypes, type KlinePipelineStep, type PipelineOperator } from './pipeline-file.js';
import { DecimalsSeen } from './decimals.js';
import { toJson } from './to-json.js';
import { yesterdayCloseJson } from './yesterday-close-json.js';

/**
 * The stream side of a kline pipeline of `quoteflow run`: its `stdout` sink and its operators, fed
 * every bar update of the sync (forming `final: false`, closed `final: true`) without a request of
 * their own. Each writes NDJSON lines through `write` (stdout: pipe it into `jq`, as with kcat).
 */
export class KlineStreams {
  readonly #updates = new Subject<BarUpdate>();
  /** Whether the sync has read its history (its first backfill is done): see {@link historyRead}. */
  readonly #current = new BehaviorSubject(false);
  readonly #subscriptions: Subscription[] = [];

  /** `onError`: an operator failed; the run stops with that error. */
  constructor(step: KlinePipelineStep, write: (line: string) => void, onError: (err: unknown) => void) {
    const sinks: Observable<unknown>[] = [];
    const stdout = step.sinks.stdout;
    if (stdout !== undefined)
      sinks.push(
        this.#updates.pipe(
          filter((u) => !stdout.finalOnly || u.final),
          map(klineMessageValue),
        ),
      );
    for (const op of step.operators)
      sinks.push(operatorOutput(op, step.source.kline.klineTypes, this.#updates, this.#current));
    for (const lines of sinks)
      this.#subscriptions.push(lines.subscribe({ next: (v) => write(`${toJson(v)}\n`), error: onError }));
  }

  /** Whether anything listens (else the sync need not report its updates). */
  get listening(): boolean {
    return this.#subscriptions.length > 0;
  }

  push(update: BarUpdate): void {
    this.#updates.next(update);
  }

  /**
   * The sync has read its history (`backfill-done`): operators that describe the present, such as
   * `yesterdayClose`, emit from now on (first what holds now, then each change), never the past.
   */
  historyRead(): void {
    if (!this.#current.value) this.#current.next(true);
  }

  /** The sync ended: operators drop their open periods (never written as final), streams end. */
  complete(): void {
    this.#updates.complete();
    for (const s of this.#subscriptions) s.unsubscribe();
  }
}

function operatorOutput(
  op: PipelineOperator,
  klineTypes: readonly KlineType[],
  updates$: Observable<BarUpdate>,
  current$: Observable<boolean>,
): Observable<unknown> {
  if ('resample' in op) {
    const { to, emit } = op.resample;
    const takes = new Set(resampledTypes(klineTypes, to));
    // Sums of the sources' volumes and turnovers keep the sources' decimals, not float noise.
    const decimals = new DecimalsSeen();
    return updates$.pipe(
      filter((u) => takes.has(u.klineType)),
      tap((u) => {
        decimals.see(`${u.code}|volume`, u.volume);
        decimals.see(`${u.code}|turnover`, u.turnover);
      }),
      resampleBars({ to, emit }),
      filter((b) => !op.sinks.stdout.finalOnly || b.final),
      map((b) =>
        resampledJson({
          ...b,
          volume: decimals.round(`${b.code}|volume`, b.volume),
          turnover: decimals.round(`${b.code}|turnover`, b.turnover),
        }),
      ),
    );
  }
  return updates$.pipe(
    filter((u) => u.klineType === 8),
    newestDailyBars(),
    yesterdayClose(),
    fromThePresent(current$),
    changedPerCode(),
    map(yesterdayCloseJson),
  );
}

/** Per update, the two newest daily bars of its code (forming or closed): `yesterdayClose`'s input. */
function newestDailyBars() {
  return (updates$: Observable<BarUpdate>): Observable<readonly Bar[]> => {
    const newest = new Map<string, Bar[]>();
    return updates$.pipe(
      map((u) => {
        const bar: Bar = { ...u, type: 'bar' };
        const bars = [bar, ...(newest.get(u.code) ?? []).filter((b) => b.tsMs !== u.tsMs)]
          .sort((a, b) => b.tsMs - a.tsMs)
          .slice(0, 2);
        newest.set(u.code, bars);
        return bars;
      }),
    );
  };
}

/**
 * Holds each code's newest previous close while the sync reads its history (62 daily bars are 62
 * past "previous closes", not news), emits the held ones once `current$` turns true, then passes
 * every record through.
 */
function fromThePresent(current$: Observable<boolean>) {
  return (closes$: Observable<YesterdayClose>): Observable<YesterdayClose> =>
    new Observable<YesterdayClose>((subscriber) => {
      const held = new Map<string, YesterdayClose>();
      let current = false;
      const gate = current$.subscribe((now) => {
        if (!now || current) return;
        current = true;
        for (const y of held.values()) subscriber.next(y);
        held.clear();
      });
      const records = closes$.subscribe({
        next: (y) => (current ? subscriber.next(y) : held.set(y.code, y)),
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        gate.unsubscribe();
        records.unsubscribe();
      };
    });
}

/** Drops a previous close equal to the last one shown for its code (a forming bar that did not move). */
function changedPerCode() {
  return (closes$: Observable<YesterdayClose>): Observable<YesterdayClose> => {
    const shown = new Map<string, string>();
    return closes$.pipe(
      filter((y) => {
        const key = toJson(y);
        if (shown.get(y.code) === key) return false;
        shown.set(y.code, key);
        return true;
      }),
    );
  };
}

/** A resampled bar in the Kafka kline value's shape, plus what says how it was made. */
function resampledJson(b: ResampledBar): Record<string, unknown> {
  return {
    code: b.code,
    kline_type: b.klineType ?? null,
    period_minutes: b.periodMs === undefined ? null : b.periodMs / 60_000,
    source_kline_type: b.sourceKlineType,
    ts: new Date(b.tsMs).toISOString(),
    open: b.open,
    high: b.high,
    low: b.low,
    close: b.close,
    volume: b.volume,
    turnover: b.turnover,
    final: b.final,
    partial: b.partial,
  };
}
