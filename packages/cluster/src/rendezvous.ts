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

/** The items of `items` that {@link rendezvousOwner} gives to `member`, in input order. */
export function rendezvousShare(
  items: readonly string[],
  members: readonly string[],
  member: string,
): string[] {
  if (!members.includes(member)) return [];
  return items.filter((item) => rendezvousOwner(item, members) === member);
}
