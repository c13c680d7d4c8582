/** The end of the slot of `slotMs` that holds `tMs`: the instant a start at `tMs` counts at. */
export function slotEndOf(tMs: number, slotMs: number): number {
  return Math.ceil(tMs / slotMs) * slotMs;
}

/**
 * The earliest instant `>= nowMs` at which a rolling window of `windowMs` holds fewer than `limit`
 * starts, given its slots oldest first (`[slotEnd, count]`, only those still in the window at
 * `nowMs`) and `extra` hypothetical starts at `nowMs` (counted at their slot's end).
 */
export function rollingEarliest(
  slots: Iterable<readonly [number, number]>,
  total: number,
  nowMs: number,
  spec: { readonly windowMs: number; readonly limit: number; readonly slotMs: number },
  extra: number,
): number {
  const excess = total + extra - spec.limit + 1;
  if (excess <= 0) return nowMs;
  let dropped = 0;
  for (const [end, count] of slots) {
    dropped += count;
    if (dropped >= excess) return Math.max(nowMs, end + spec.windowMs);
  }
  return slotEndOf(nowMs, spec.slotMs) + spec.windowMs;
}

/**
 * One rolling window's counters in process: a count per slot end, ascending, and their total.
 * Slots that left the window are dropped as time passes.
 */
export class SlotCounts {
  private readonly ends: number[] = [];
  private readonly counts: number[] = [];
  private total = 0;

  /** Starts whose slot is still in the window at `nowMs`. */
  countAt(nowMs: number, windowMs: number): number {
    let n = this.total;
    for (let i = 0; i < this.ends.length && this.ends[i]! <= nowMs - windowMs; i++) n -= this.counts[i]!;
    return n;
  }

  /** See {@link rollingEarliest}. */
  earliest(
    nowMs: number,
    spec: { readonly windowMs: number; readonly limit: number; readonly slotMs: number },
    extra: number,
  ): number {
    const live = this.live(nowMs, spec.windowMs);
    return rollingEarliest(live, this.countAt(nowMs, spec.windowMs), nowMs, spec, extra);
  }

  /** Records a start at `nowMs`, dropping the slots that left the window. */
  record(nowMs: number, slotMs: number, windowMs: number): void {
    let drop = 0;
    while (drop < this.ends.length && this.ends[drop]! <= nowMs - windowMs)
      this.total -= this.counts[drop++]!;
    if (drop > 0) {
      this.ends.splice(0, drop);
      this.counts.splice(0, drop);
    }
    const end = slotEndOf(nowMs, slotMs);
    let i = this.ends.length;
    while (i > 0 && this.ends[i - 1]! > end) i--;
    if (i > 0 && this.ends[i - 1] === end) this.counts[i - 1]!++;
    else {
      this.ends.splice(i, 0, end);
      this.counts.splice(i, 0, 1);
    }
    this.total++;
  }

  private *live(nowMs: number, windowMs: number): Generator<readonly [number, number]> {
    for (let i = 0; i < this.ends.length; i++)
      if (this.ends[i]! > nowMs - windowMs) yield [this.ends[i]!, this.counts[i]!];
  }
}
