import type { MembershipView } from '../cluster-membership.js';

/**
 * The workers of a group seen alive earlier that are no longer (dead or left), oldest departure
 * first: what `WorkLease.departed` hands to the work, so that whoever takes over their items may
 * fence what they left open (a Kafka transactional id, say) first.
 */
export class DepartedWorkers {
  private readonly workerId: string;
  /** The other workers of the last views that listed them. */
  private readonly seen = new Set<string>();
  private readonly departed: string[] = [];

  /** @param workerId - this worker, never listed */
  constructor(workerId: string) {
    this.workerId = workerId;
  }

  /** Oldest departure first; the same array throughout, growing as workers depart. */
  list(): readonly string[] {
    return this.departed;
  }

  /** Notes the workers a view no longer lists (a fenced view lists none: it says nothing of them). */
  note(view: MembershipView): void {
    if (view.fenced) return;
    for (const id of this.seen)
      if (!view.members.includes(id)) {
        this.seen.delete(id);
        this.departed.push(id);
      }
    for (const id of view.members) if (id !== this.workerId) this.seen.add(id);
  }
}
