import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rendezvousOwner, rendezvousShare } from './rendezvous.js';

const items = Array.from({ length: 3_000 }, (_, i) => `CODE${i}.US`);

describe('rendezvousOwner', () => {
  it('gives every item to exactly one member, the same for any order of the member list', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        fc.string(),
        (members, item) => {
          const owner = rendezvousOwner(item, members);
          expect(members).toContain(owner);
          expect(rendezvousOwner(item, [...members].reverse())).toBe(owner);
          const shares = members.map((m) => rendezvousShare([item], members, m).length);
          expect(shares.reduce((a, b) => a + b, 0)).toBe(1);
        },
      ),
    );
  });

  it('moves only the departed member’s items when a member leaves', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 6 }),
        fc.nat(),
        (members, pick) => {
          const gone = members[pick % members.length]!;
          const rest = members.filter((m) => m !== gone);
          for (const item of items.slice(0, 200)) {
            const before = rendezvousOwner(item, members);
            const after = rendezvousOwner(item, rest);
            if (before !== gone) expect(after).toBe(before);
            else expect(rest).toContain(after);
          }
        },
      ),
    );
  });

  it('spreads items evenly over members (within 15 % of the mean for 3,000 items on 3 workers)', () => {
    const members = ['host-a~101~x1', 'host-a~102~x2', 'host-b~7~x3'];
    const counts = members.map((m) => rendezvousShare(items, members, m).length);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(items.length);
    for (const c of counts) expect(Math.abs(c - 1_000)).toBeLessThan(150);
  });

  it('returns undefined without members and nothing for a non-member', () => {
    expect(rendezvousOwner('X', [])).toBeUndefined();
    expect(rendezvousShare(['X', 'Y'], ['a'], 'b')).toEqual([]);
  });
});
