import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { balancedShares, rendezvousOwner, rendezvousShare } from './rendezvous.js';

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

const memberIds = fc.uniqueArray(fc.stringMatching(/^[a-z0-9~]{1,10}$/), { minLength: 1, maxLength: 7 });
const itemIds = fc.uniqueArray(fc.stringMatching(/^[A-Z0-9.]{1,8}$/), { maxLength: 60 });

/** item → member, from a division. */
function owners(shares: Map<string, string[]>): Map<string, string> {
  const owner = new Map<string, string>();
  for (const [member, items] of shares) for (const item of items) owner.set(item, member);
  return owner;
}

describe('balancedShares', () => {
  it('gives every item to exactly one member, ⌊n/m⌋ or ⌈n/m⌉ each, whatever the order of either list', () => {
    fc.assert(
      fc.property(memberIds, itemIds, (members, items) => {
        const shares = balancedShares(items, members);
        expect([...shares.keys()].sort()).toEqual([...members].sort());
        const all = [...shares.values()].flat();
        expect(all.sort()).toEqual([...items].sort());
        const floor = Math.floor(items.length / members.length);
        for (const share of shares.values())
          expect([floor, Math.ceil(items.length / members.length)]).toContain(share.length);
        const reordered = balancedShares([...items].reverse(), [...members].reverse());
        expect(owners(reordered)).toEqual(owners(shares));
      }),
    );
  });

  it('keeps each share in input order', () => {
    const items = ['D', 'A', 'C', 'B', 'E'];
    for (const share of balancedShares(items, ['w1', 'w2']).values()) {
      expect(share).toEqual(items.filter((i) => share.includes(i)));
    }
  });

  it('divides 4 items over 2 workers 2/2 and 3,000 over 3 workers 1,000 each, where plain rendezvous does not', () => {
    const pairs = Array.from({ length: 64 }, (_, i) => [`w${i}~a`, `w${i}~b`]);
    const four = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'];
    let plainUneven = 0;
    for (const members of pairs) {
      for (const share of balancedShares(four, members).values()) expect(share).toHaveLength(2);
      if (members.some((m) => rendezvousShare(four, members, m).length !== 2)) plainUneven++;
    }
    expect(plainUneven).toBeGreaterThan(0);
    const members = ['host-a~101~x1', 'host-a~102~x2', 'host-b~7~x3'];
    for (const share of balancedShares(items, members).values()) expect(share).toHaveLength(1_000);
  });

  it('moves few items of the members that stay when one leaves (at most its own share plus one per member)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9~]{1,10}$/), { minLength: 2, maxLength: 7 }),
        fc.integer({ min: 0, max: 400 }),
        fc.nat(),
        (members, n, pick) => {
          const items = Array.from({ length: n }, (_, i) => `C${i}.HK`);
          const gone = members[pick % members.length]!;
          const before = owners(balancedShares(items, members));
          const after = owners(
            balancedShares(
              items,
              members.filter((m) => m !== gone),
            ),
          );
          const departedShare = items.filter((i) => before.get(i) === gone).length;
          const movedAmongStayers = items.filter(
            (i) => before.get(i) !== gone && after.get(i) !== before.get(i),
          );
          // Plain rendezvous moves none; a reshuffle would move about (m-1)/m of all items.
          expect(movedAmongStayers.length).toBeLessThanOrEqual(departedShare + members.length);
        },
      ),
    );
  });

  it('maps every member to an empty share without items, and nothing without members', () => {
    expect(balancedShares([], ['a', 'b'])).toEqual(
      new Map([
        ['a', []],
        ['b', []],
      ]),
    );
    expect(balancedShares(['X'], [])).toEqual(new Map());
  });
});
