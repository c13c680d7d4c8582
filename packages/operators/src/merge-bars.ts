import { Observable, asyncScheduler } from 'rxjs';
import type { OperatorFunction, SchedulerLike, Subscription } from 'rxjs';
import { createBarMerger } from './bar-merger.js';
import type { BarMergerOptions, MergeBarsInput, MergeBarsOutput } from './bar-merger.js';

/** Options of {@link mergeBars}. */
export interface MergeBarsOptions extends BarMergerOptions {
  /** The clock and timer for closing bars by time. @defaultValue rxjs `asyncScheduler` */
  readonly scheduler?: SchedulerLike;
}

/**
 * Merges history (from `/kline`) and the latest two bars (from `/batch-kline`) into one series
 * per (code, klineType), upserting by bar start:
 *
 * - each change of the forming bar is emitted as `final: false` with `revision` 0, 1, 2, …
 *   (an unchanged repeat is not emitted);
 * - each closed bar is emitted exactly once as `final: true`: when a newer bar of the series
 *   appears, or when its period end (core's `barPeriodAt`) plus `graceMs` has passed on the
 *   scheduler's clock. History bars that are already closed are emitted only as `final: true`;
 * - a bar older than one already closed is never emitted, except once to fill a gap this operator
 *   reported (a backfill, accepted in ascending order within the gap);
 * - a gap (closed bars missing between the last closed bar, or the `lastClosed` seed, and the next
 *   bar) is emitted as a `GapMarker` with reason `missing-bars`, `fromMs` = first missing bar
 *   start, `toMs` = start of the bar that follows, so a pipeline can backfill it;
 * - an input `GapMarker` is forwarded, and the next bar of its series (or of every series of its
 *   code when `klineType` is undefined) opens it without a second gap report.
 *
 * Batches are sorted and validated (invalid rows go to `onReport`). On completion the forming bars
 * are not emitted as final (they are not closed); pending timers are cancelled. Errors are
 * forwarded; a throw from `onReport` or `calendarOf` errors the output. Holidays are not modelled,
 * so a gap report may span a holiday or, for 24-hour calendars, a weekend without trading.
 *
 * @param options - see {@link BarMergerOptions}; `scheduler` for tests.
 * @example
 * ```ts
 * const lastClosed = new Map([[seriesKey('AAPL.US', 1), stateFile.lastClosedMs]]);
 * merge(history$, latest$).pipe(mergeBars({ graceMs: 5_000, lastClosed }))
 *   .subscribe((u) => (u.type === 'gap' ? backfill(u) : write(u)));
 * ```
 */
export function mergeBars(options: MergeBarsOptions = {}): OperatorFunction<MergeBarsInput, MergeBarsOutput> {
  createBarMerger(options); // validate options now
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<MergeBarsOutput>((subscriber) => {
      const merger = createBarMerger(options);
      const emit = (out: MergeBarsOutput) => subscriber.next(out);
      const clock = () => scheduler.now();
      let timer: Subscription | undefined;
      let timerAt = Infinity;

      const arm = (): void => {
        // A consumer may unsubscribe while we emit: never leave a timer behind a closed output.
        if (subscriber.closed) return;
        const at = merger.nextDeadlineMs();
        if (at >= timerAt) return;
        timer?.unsubscribe();
        timerAt = at;
        timer = scheduler.schedule(fire, Math.max(0, at - scheduler.now()));
      };
      const fire = (): void => {
        timer = undefined;
        timerAt = Infinity;
        try {
          merger.expire(scheduler.now(), emit);
        } catch (err) {
          subscriber.error(err);
          return;
        }
        arm();
      };

      const sub = source.subscribe({
        next: (input) => {
          try {
            merger.push(input, clock, emit);
          } catch (err) {
            subscriber.error(err);
            return;
          }
          if (merger.nextDeadlineMs() < timerAt) arm();
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        sub.unsubscribe();
      };
    });
}
