import type { CommandContext } from '../command-context.js';

/**
 * The stop of a long-running command that runs its pipeline itself (`depth`, `suspensions
 * --watch`): `controller` aborts on SIGINT/SIGTERM or after `durationS` seconds; `dispose` removes
 * the listener and the timer.
 */
export function commandStopper(
  ctx: CommandContext,
  durationS: number | undefined,
): { readonly controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onStop = (): void => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onStop();
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const timer =
    durationS === undefined
      ? undefined
      : setTimeout(() => controller.abort(new Error('duration reached')), durationS * 1000);
  return {
    controller,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onStop);
    },
  };
}
