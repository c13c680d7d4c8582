import type { CommandContext } from '../command-context.js';

/** The stop of a long-running command (see {@link commandStopper}). */
export interface CommandStop {
  /** Aborts on SIGINT/SIGTERM, after `--duration`, or when the command stops itself. */
  readonly controller: AbortController;
  /** Whether `--duration` stopped the command (not a signal, nor a failure before it). */
  readonly stoppedByDuration: boolean;
  /** Removes the signal listener and the timer, and ends the wait on the sinks. */
  dispose(): void;
}

/**
 * The one stop of the CLI's long-running commands (`depth`, `suspensions --watch`, and through
 * `CommandRun` `sync`, `run`, `backfill`, the demo): `controller` aborts on SIGINT/SIGTERM or after
 * `durationS` seconds, and while stopping, `sinks` (`describeSinks`) is what a cut-off shutdown
 * says it was still waiting for.
 */
export function commandStopper(
  ctx: CommandContext,
  durationS: number | undefined,
  sinks: string,
): CommandStop {
  const controller = new AbortController();
  let stoppedByDuration = false;
  const onStop = (): void => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onStop();
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const timer =
    durationS === undefined
      ? undefined
      : setTimeout(() => {
          stoppedByDuration = !controller.signal.aborted;
          controller.abort(new Error('duration reached'));
        }, durationS * 1000);
  const flushing = ctx.stopWaits.duringStop(controller.signal, sinks);
  return {
    controller,
    get stoppedByDuration() {
      return stoppedByDuration;
    },
    dispose: () => {
      flushing();
      if (timer !== undefined) clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onStop);
    },
  };
}
