import { sustainedRate, type EndpointKind, type PlanLimits } from '../plans.js';

/**
 * The shortest poll interval that `requestsPerPoll` requests of `endpoint` can keep up forever
 * under the plan's sliding-window rules, and never below `floorMs`.
 */
export function defaultPollIntervalMs(
  limits: PlanLimits,
  endpoint: EndpointKind,
  requestsPerPoll: number,
  floorMs: number,
): number {
  return Math.max(floorMs, Math.ceil((requestsPerPoll * 1000) / sustainedRate(limits, endpoint)));
}
