import type { ClusterSyncEvent, RedisQuotaEvent } from '@quoteflow/cluster';
import type { CommandContext } from '../command-context.js';

/**
 * Logs what a cluster worker reports: Redis away, a fence and warnings at warn level (the worker
 * is not doing its share), the rest at info; an assignment as the number of series held.
 */
export function logClusterEvent(
  logger: CommandContext['logger'],
  event: ClusterSyncEvent | RedisQuotaEvent,
): void {
  const fields = event.type === 'assignment' ? { ...event, held: event.held.length } : event;
  const trouble =
    event.type === 'warning' ||
    event.type === 'redis-unavailable' ||
    event.type === 'state-reset' ||
    (event.type === 'members' && event.fenced);
  if (trouble) logger.warn(fields, event.type === 'warning' ? event.message : `cluster ${event.type}`);
  else logger.info(fields, `cluster ${event.type}`);
}
