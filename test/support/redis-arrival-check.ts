// The independent window check of the cluster tests: a request arrives at the service somewhere
// between the instant it left (`startMs`) and the instant its answer came back (`settleMs`); the
// check replays the worst case for every request through the simulator's own rate limiter (shares
// no code with core or cluster).
import { type SimPlan, type SimEndpoint } from '@quoteflow/simulator';
import { RateLimiter, simPlanLimits } from '@quoteflow/simulator/internal';

/** One request as a worker saw it: when it left and when its answer (or failure) came back. */
export interface TimedRequest {
  readonly startMs: number;
  readonly settleMs: number;
  readonly endpoint: SimEndpoint;
}

/**
 * Requests the service could have refused for some arrival times consistent with the workers'
 * logs: for each request, every request that left before it arrives as late as it can (its settle,
 * but no later than this one) and this one as early as it can (its start). Empty when no choice of
 * arrival times breaks a rule of `plan`.
 */
export function arrivalBoundBreaches(
  plan: SimPlan,
  requests: readonly TimedRequest[],
): { atMs: number; endpoint: SimEndpoint; rule: string | undefined; before: number[] }[] {
  const limits = simPlanLimits(plan);
  const longest = Math.max(...limits.rules.map((r) => r.windowMs));
  const sorted = [...requests].sort((a, b) => a.startMs - b.startMs);
  const out: { atMs: number; endpoint: SimEndpoint; rule: string | undefined; before: number[] }[] = [];
  let from = 0;
  for (let j = 0; j < sorted.length; j++) {
    const r = sorted[j]!;
    // Requests that settled a whole longest window before this start cannot share a window with it.
    while (
      from < j &&
      sorted[from]!.settleMs <= r.startMs - longest &&
      sorted[from]!.startMs <= r.startMs - longest
    )
      from++;
    const earlier = sorted
      .slice(from, j)
      .filter((q) => q.settleMs > r.startMs - longest)
      .map((q) => ({ endpoint: q.endpoint, atMs: Math.min(q.settleMs, r.startMs) }))
      .sort((a, b) => a.atMs - b.atMs);
    // Count every earlier one, even one its own replay would refuse: all of them did arrive.
    const limiter = new RateLimiter(limits, { countRefused: true });
    for (const q of earlier) limiter.arrive(q.endpoint, q.atMs);
    const decision = limiter.arrive(r.endpoint, r.startMs);
    if (!decision.allowed) {
      out.push({
        atMs: r.startMs,
        endpoint: r.endpoint,
        rule: decision.rule,
        before: earlier.slice(-12).map((q) => r.startMs - q.atMs),
      });
    }
  }
  return out;
}
