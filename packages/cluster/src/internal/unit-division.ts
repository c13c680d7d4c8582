import { ClusterError } from '../cluster-error.js';
import { balancedShares } from '../rendezvous.js';

/**
 * The division of a sync's items by units that move together (`ClusterSyncOptions.units`): the
 * units are divided by {@link balancedShares} over their ids (a unit's first item), and a worker
 * wants every item of its units. Items in no unit are units of their own; items of a unit that
 * are not among the items are left out.
 */
export class UnitDivision {
  /** Unit id → its items (in the order given). */
  private readonly units = new Map<string, readonly string[]>();

  /** @throws ClusterError `QF_INVALID_OPTION` when an item is in two units. */
  constructor(items: readonly string[], units: readonly (readonly string[])[] = []) {
    const known = new Set(items);
    const placed = new Set<string>();
    for (const unit of units) {
      const mine = unit.filter((item) => known.has(item));
      for (const item of mine) {
        if (placed.has(item))
          throw new ClusterError('QF_INVALID_OPTION', `clusterSync: item ${item} is in two of "units"`);
        placed.add(item);
      }
      if (mine.length > 0) this.units.set(mine[0]!, mine);
    }
    for (const item of known) if (!placed.has(item)) this.units.set(item, [item]);
  }

  /** The items `member` wants among `members` (none when it is not one of them). */
  shareOf(members: readonly string[], member: string): Set<string> {
    const ids = balancedShares([...this.units.keys()], members).get(member) ?? [];
    return new Set(ids.flatMap((id) => this.units.get(id)!));
  }
}
