import type { Logger } from 'pino';
import type { ClusterSyncEvent, RedisQuotaEvent } from '@quoteflow/cluster';

/** Items named in an assignment line before the rest are only counted. */
const NAMED_ITEMS = 20;

/** At most {@link NAMED_ITEMS} items, then how many more. */
function named(items: readonly string[]): string[] {
  return items.length <= NAMED_ITEMS
    ? [...items]
    : [...items.slice(0, NAMED_ITEMS), `… ${items.length - NAMED_ITEMS} more`];
}

/**
 * What a cluster worker reports, for its operator: a change of what this worker holds once, on
 * the status channel (shown at the default level also when stderr is a file or a pipe, as under a
 * supervisor), naming the worker, the live members and the codes it holds, gained and lost; Redis
 * away, a fence and warnings at warn level (the worker is not doing its share); the member set
 * itself and what else goes well at debug, since the assignment line says what matters of it.
 */
export class ClusterEventLog {
  /** Per group: the members of its latest view, and the items of the last assignment logged. */
  readonly #members = new Map<string, readonly string[]>();
  readonly #held = new Map<string, string>();

  constructor(
    private readonly logger: Logger,
    private readonly status: Logger,
    private readonly workerId: string,
  ) {}

  /** One event of the worker; `group` says which of its shares it concerns. */
  note(event: ClusterSyncEvent | RedisQuotaEvent, group = ''): void {
    switch (event.type) {
      case 'members':
        if (event.fenced) this.logger.warn({ ...event, worker: this.workerId }, 'cluster members');
        else {
          this.#members.set(group, event.members);
          this.logger.debug({ ...event, worker: this.workerId }, 'cluster members');
        }
        return;
      case 'assignment':
        return this.#assignment(event, group);
      case 'warning':
        this.logger.warn(event, event.message);
        return;
      case 'redis-unavailable':
      case 'state-reset':
        this.logger.warn(event, `cluster ${event.type}`);
        return;
      default:
        this.logger.info(event, `cluster ${event.type}`);
    }
  }

  /** A change of what this worker holds, said once: the same items again (a retried claim) are not. */
  #assignment(event: Extract<ClusterSyncEvent, { type: 'assignment' }>, group: string): void {
    const held = event.held.join('\n');
    const fields = {
      worker: this.workerId,
      ...(group === '' ? {} : { group }),
      members: this.#members.get(group) ?? [],
      held: event.held.length,
      codes: named(event.held),
      gained: named(event.gained),
      lost: named(event.lost),
      pending: named(event.pending),
    };
    if (this.#held.get(group) === held) {
      this.logger.debug(fields, 'cluster assignment');
      return;
    }
    this.#held.set(group, held);
    this.status.info(fields, 'cluster assignment');
  }
}
