/** A 53-bit hash of `member` and `item` (FNV-1a over both, then a murmur3-style finaliser per half). */
function weight(member: string, item: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ 0x5bd1e995;
  const feed = (s: string) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    }
  };
  feed(member);
  h1 = Math.imul(h1 ^ 0, 0x01000193);
  h2 = Math.imul(h2 ^ 0, 0x5bd1e995);
  feed(item);
  const mix = (h: number) => {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
  };
  return mix(h1) * 2 ** 21 + (mix(h2) >>> 11);
}

/**
 * The owner of `item` among `members` by rendezvous (highest-random-weight) hashing: every worker
 * that sees the same member set picks the same owner without talking to the others, and when a
 * member leaves only its own items move (each to the member with the next-highest weight).
 * Returns `undefined` when `members` is empty; ties (practically never) go to the smaller id.
 *
 * @example
 * ```ts
 * rendezvousOwner('AAPL.US', ['w1', 'w2', 'w3']); // e.g. 'w2', the same on every worker
 * ```
 */
export function rendezvousOwner(item: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const w = weight(member, item);
    if (w > bestWeight || (w === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}

/**
 * Divides `items` among `members` as evenly as possible (every member holds ⌊n/m⌋ or ⌈n/m⌉ items)
 * while keeping rendezvous hashing's stability: items are taken in an order fixed by their own hash,
 * and each goes to the member of highest weight that still has room. Every worker that sees the
 * same items and members computes the same division without talking to the others; when a member
 * joins or leaves, most items stay where they were (plain rendezvous hashing moves only the
 * departed member's items but can give one member all of them: 1 time in 8 for 4 items on 2 workers).
 * Returns member → items in input order; members without items map to `[]`.
 *
 * @example
 * ```ts
 * balancedShares(['A', 'B', 'C', 'D'], ['w1', 'w2']); // e.g. w1 → [A, D], w2 → [B, C], on every worker
 * ```
 */
export function balancedShares(items: readonly string[], members: readonly string[]): Map<string, string[]> {
  const shares = new Map<string, string[]>(members.map((m) => [m, []]));
  if (members.length === 0) return shares;
  const unique = [...new Set(items)];
  const floor = Math.floor(unique.length / members.length);
  let extras = unique.length % members.length; // members that may hold one more than `floor`
  const owner = new Map<string, string>();
  const load = new Map<string, number>(members.map((m) => [m, 0]));
  const byOwnHash = unique
    .map((item) => ({ item, w: weight('', item) }))
    .sort((a, b) => b.w - a.w || (a.item < b.item ? -1 : 1));
  for (const { item } of byOwnHash) {
    const ranked = members
      .map((member) => ({ member, w: weight(member, item) }))
      .sort((a, b) => b.w - a.w || (a.member < b.member ? -1 : 1));
    for (const { member } of ranked) {
      const held = load.get(member)!;
      if (held < floor || (held === floor && extras > 0)) {
        if (held === floor) extras--;
        load.set(member, held + 1);
        owner.set(item, member);
        break;
      }
    }
  }
  for (const item of unique) shares.get(owner.get(item)!)!.push(item);
  return shares;
}

/** The items of `items` that {@link rendezvousOwner} gives to `member`, in input order. */
export function rendezvousShare(
  items: readonly string[],
  members: readonly string[],
  member: string,
): string[] {
  if (!members.includes(member)) return [];
  return items.filter((item) => rendezvousOwner(item, members) === member);
}
