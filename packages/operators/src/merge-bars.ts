import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { createBarMerger } from './bar-merger.js';
import type { BarMergerOptions, MergeBarsInput, MergeBarsOutput } from './bar-merger-types.js';

/** Options of {@link mergeBars}. */
export type MergeBarsOptions = BarMergerOptions;

/**
 * Merges history (from `/kline`) and the latest bars (from `/batch-kline`) into one series per
 * (code, klineType), upserting by bar start, and says when a bar is final **from evidence only**:
 *
 * - a bar is final when a newer bar of its series was seen in the same answer as its values, or in
 *   an answer that arrived before its values were read (`Bar.readAtMs`, `Bar.receivedAtMs`); or
 *   when its values were read after the calendar closed its session (core's `finalReadFromMs`)
 *   plus `graceMs`. Time passing alone never closes a bar, and how the service labels bars (clock
 *   hours or the open, midnight UTC or local) does not matter;
 * - each closed bar is emitted exactly once as `final: true`, in order of start per series, with
 *   the values of the read that proved it; history bars already closed come only as `final: true`;
 *   older history below the oldest bar held (a reset's `firstHeldMs`, or with `growsBackwards` its
 *   first closed bar) comes final, oldest first within each push;
 * - each change of the newest bar of a series, not yet final, is emitted as `final: false` with
 *   `revision` 0, 1, 2, … (an unchanged repeat is not emitted), but never ahead of a final the
 *   series still owes: while an older bar waits for a re-read or bars missing before it are
 *   awaited, forming updates wait too; once that settles come the finals, in order, then the
 *   newest forming values. So per series every update is at or after the newest final before it
 *   (a bar closed meanwhile comes only as final); one exception: a bar first seen after a newer
 *   one went out (answers out of order);
 * - when a newer bar appears while an older one is unproven (polls skipped it), a `GapMarker` with
 *   reason `'unconfirmed'` and `fromMs` = that bar asks for it to be read again; newer bars wait
 *   behind it, forming values too. A re-read (history from `fromMs`, pushed in) proves it. An answer that covers its
 *   start without it drops it (report `'vanished'`);
 * - bars the calendar expects between two bars seen, under every labelling, are reported as a
 *   `GapMarker` with reason `'missing-bars'`, `fromMs`/`toMs` the bars around them (read history
 *   from `fromMs` again); newer bars wait until an answer covers the gap (bars on both sides in one
 *   answer: the missing ones do not exist), the bars read fill it, or an input `GapMarker` whose
 *   `toMs` lies past it says history cannot reach back that far;
 * - an input `GapMarker` is forwarded, and the next bar of its series opens without a gap report;
 * - an input `SeriesReset` forgets a series (another worker took it, or gave it back): its pending
 *   bars are dropped unemitted and it starts again from the reset's `lastClosedMs`.
 *
 * Pure: no timers, no clock. A bar that is forming when the input completes stays unemitted as
 * final; {@link BarMerger.pending} (plain form) says which bars need another read, and when.
 * Errors are forwarded; a throw from `onReport` or `calendarOf` errors the output.
 *
 * @param options - see {@link BarMergerOptions}.
 * @example
 * ```ts
 * merge(history$, latest$).pipe(mergeBars({ lastClosed }))
 *   .subscribe((u) => (u.type === 'gap' ? readAgain(u) : u.final && write(u)));
 * ```
 */
export function mergeBars(options: MergeBarsOptions = {}): OperatorFunction<MergeBarsInput, MergeBarsOutput> {
  createBarMerger(options); // validate options now
  return (source) =>
    new Observable<MergeBarsOutput>((subscriber) => {
      const merger = createBarMerger(options);
      const emit = (out: MergeBarsOutput) => subscriber.next(out);
      return source.subscribe({
        next: (input) => {
          try {
            merger.push(input, emit);
          } catch (err) {
            subscriber.error(err);
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
