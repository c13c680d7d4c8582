import { describeRedisError } from './describe-redis-error.js';
import { REDIS_UNAVAILABLE_REMINDER_MS, type RedisQuotaEvent } from '../redis-window-store-options.js';

/**
 * Whether Redis answers, as a store sees it: reports `redis-unavailable` when it stops (and again
 * every {@link REDIS_UNAVAILABLE_REMINDER_MS} while it stays away: requests wait meanwhile) and
 * `redis-available` when it is back, and counts the outages and their length.
 */
export class RedisOutages {
  available = true;
  count = 0;
  private downSinceMs = 0;
  private remindedAtMs = 0;
  private pastMs = 0;

  constructor(private readonly onEvent: (event: RedisQuotaEvent) => void) {}

  down(error: unknown, nowMs: number): void {
    if (this.available) {
      this.available = false;
      this.downSinceMs = this.remindedAtMs = nowMs;
      this.count++;
      this.onEvent({ type: 'redis-unavailable', atMs: nowMs, error: describeRedisError(error) });
    } else if (nowMs - this.remindedAtMs >= REDIS_UNAVAILABLE_REMINDER_MS) {
      this.remindedAtMs = nowMs;
      this.onEvent({
        type: 'redis-unavailable',
        atMs: nowMs,
        error: describeRedisError(error),
        downMs: nowMs - this.downSinceMs,
      });
    }
  }

  up(nowMs: number): void {
    if (this.available) return;
    this.available = true;
    this.pastMs += nowMs - this.downSinceMs;
    this.onEvent({ type: 'redis-available', atMs: nowMs, downMs: nowMs - this.downSinceMs });
  }

  /** Time Redis has been away in total, the current outage included, in ms. */
  totalMs(nowMs: number): number {
    return this.pastMs + (this.available ? 0 : nowMs - this.downSinceMs);
  }
}
