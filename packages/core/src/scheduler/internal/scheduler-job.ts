import type { Priority } from '../../request-scheduler.js';
import type { FairQueueItem } from './fair-queue.js';

/**
 * Where a job is: in its priority's queue, handed to bottleneck and not started yet, started
 * (its `send` running), or done (settled, aborted or refused on close).
 */
export type JobState = 'queued' | 'dispatching' | 'started' | 'settled';

/** One call of `PlanScheduler.schedule`, from queue entry until it settles. */
export interface SchedulerJob extends FairQueueItem {
  readonly priority: Priority;
  readonly signal: AbortSignal | undefined;
  readonly send: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly enqueuedAtMs: number;
  state: JobState;
  /** Chosen because backfill's reserved share was due (it does not give way to live work). */
  viaFloor: boolean;
  /** While handed out: the instant it was expected to start at. */
  plannedAtMs: number;
  onAbort: (() => void) | undefined;
  /** While handed out and waiting for its exact start instant: the timer and the run's end. */
  waiting: { handle: unknown; done: () => void } | undefined;
}
