import type { EndpointKind } from '../../plans.js';
import type { AcquireResult, WindowSpec, WindowStore } from '../window-store.js';
import type { PlanWindows } from './plan-windows.js';
import type { RateLimitBackoff } from './rate-limit-backoff.js';

/**
 * When one more request of an endpoint may start: every window spec of the plan
 * ({@link PlanWindows}, with recovery pacing after a rate-limit pause) checked against the
 * start-time logs of the {@link WindowStore}, and no start during a pause.
 */
export class StartGate {
  constructor(
    private readonly windows: PlanWindows,
    private readonly store: WindowStore,
    private readonly backoff: RateLimitBackoff,
  ) {}

  /** The specs one start of `endpoint` at `now` must satisfy. */
  specsFor(endpoint: EndpointKind, now: number): WindowSpec[] {
    const paceMs = this.backoff.paceMs(now, () => this.windows.intervalMs(endpoint));
    return this.windows.specsFor(endpoint, now, paceMs);
  }

  /** Starts of `jobs` (handed out but not yet made), per window key, counted as if made now. */
  pendingStarts(jobs: Iterable<{ readonly endpoint: EndpointKind }>, now: number): Map<string, number> {
    const extra = new Map<string, number>();
    for (const job of jobs) {
      for (const spec of this.specsFor(job.endpoint, now))
        extra.set(spec.key, (extra.get(spec.key) ?? 0) + 1);
    }
    return extra;
  }

  /**
   * The earliest instant >= `fromMs` (default now) at which one more job of `endpoint` may start,
   * with `extra` starts counted as made at `fromMs`.
   */
  earliestFor(
    endpoint: EndpointKind,
    now: number,
    extra?: ReadonlyMap<string, number>,
    fromMs = now,
  ): number {
    return Math.max(
      this.backoff.pausedUntilMs,
      this.store.earliestStart(this.specsFor(endpoint, now), fromMs, extra),
    );
  }

  /** Checks and records one start of `endpoint` at `now` as one step ({@link WindowStore.tryAcquire}). */
  tryAcquire(endpoint: EndpointKind, now: number): AcquireResult | Promise<AcquireResult> {
    return this.store.tryAcquire(this.specsFor(endpoint, now), now, endpoint);
  }
}
