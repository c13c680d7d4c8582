import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { createBarResampler } from './bar-resampler.js';
import type { BarResamplerOptions, ResampleInput, ResampledBar } from './bar-resampler.js';

/**
 * Aggregates bars into longer periods per (code, source klineType): any N-minute period from
 * 1-minute bars, the 2-hour and 4-hour bars the service does not offer for stocks, or daily,
 * weekly and monthly bars. Periods follow core's `barPeriodAt`: anchored at each session segment
 * for stocks (a period never spans the lunch break, the last one of a segment may be short) and at
 * the Unix epoch (UTC) for 24-hour markets.
 *
 * OHLCV rules: open = first source open, close = last source close, high/low = extremes, volume
 * and turnover summed. Input may be closed bars or a `mergeBars` stream: a `final: false` source
 * counts but may still change; the first `final` version of a source bar wins. A period is closed
 * (`final: true`, once) when all its expected source bars are seen closed (`partial: false`) or
 * when a source from a later period arrives (`partial: true` if some were missing). Sources older
 * than the open period are dropped (`onReport`, problem `late`). On completion open periods are
 * not emitted as final. A source type that cannot nest in the target (e.g. 15-minute bars into 20
 * minutes, daily into hourly) errors the output with `QF_INVALID_OPTION`; so does a throw from
 * `onReport` or `calendarOf`. No timers: closing by time is `mergeBars`' job upstream.
 *
 * @param options - `to` (required), `emit`, `calendarOf`, `onReport`; see {@link BarResamplerOptions}.
 * @example
 * ```ts
 * oneMinute$.pipe(mergeBars(), filter(isBarUpdate), resampleBars({ to: 7 })) // 4-hour bars
 *   .subscribe((b) => b.final && write(b));
 * ```
 */
export function resampleBars(options: BarResamplerOptions): OperatorFunction<ResampleInput, ResampledBar> {
  createBarResampler(options); // validate options now
  return (source) =>
    new Observable<ResampledBar>((subscriber) => {
      const resampler = createBarResampler(options);
      const emit = (out: ResampledBar) => subscriber.next(out);
      return source.subscribe({
        next: (bar) => {
          try {
            resampler.push(bar, emit);
          } catch (err) {
            subscriber.error(err);
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}

/**
 * Plain-function form of {@link resampleBars} for a finished list of bars: the closed periods,
 * then every still open period as it stands (`final: false`, `partial: true`).
 *
 * @example
 * ```ts
 * const fourHour = resampleBarList(history, { to: 7, emit: 'final' });
 * ```
 */
export function resampleBarList(
  bars: readonly ResampleInput[],
  options: BarResamplerOptions,
): ResampledBar[] {
  const resampler = createBarResampler(options);
  const out: ResampledBar[] = [];
  const emit = (b: ResampledBar) => out.push(b);
  for (const bar of bars) resampler.push(bar, emit);
  resampler.flush(emit);
  return out;
}
