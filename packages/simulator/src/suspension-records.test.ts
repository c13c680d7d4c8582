import { describe, expect, it } from 'vitest';
import { suspensionRecords } from './suspension-records.js';

const NOW = Date.parse('2026-11-17T15:00:00Z');
const FIELDS = {
  sse: [
    'symbol',
    'symbolName',
    'haltReason',
    'haltDate',
    'haltTime',
    'haltPeriod',
    'resumeDate',
    'resumeTime',
    'publishDate',
  ],
  nyse: [
    'symbol',
    'symbolName',
    'haltReason',
    'haltDate',
    'haltTime',
    'haltDateTime',
    'resumeDate',
    'resumeTime',
    'resumeDateTime',
    'sourceExchange',
    'publishDate',
  ],
  nasdaq: [
    'symbol',
    'symbolName',
    'haltReason',
    'haltDate',
    'haltTime',
    'haltDateTime',
    'resumeDate',
    'resumeTime',
    'resumeDateTime',
    'sourceExchange',
    'pauseThresholdPrice',
    'publishDate',
  ],
} as const;
const WALL = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('suspensionRecords', () => {
  it.each(['sse', 'nyse', 'nasdaq'] as const)(
    '%s: per-exchange fields, non-nullable ones always present, latest first',
    (ex) => {
      const records = suspensionRecords(ex, NOW, 1);
      expect(records.length).toBeGreaterThan(150);
      for (const r of records) {
        expect(Object.keys(r).sort()).toEqual([...FIELDS[ex]].sort());
        expect(r['symbol']).toMatch(/^\S+$/);
        expect(r['publishDate']).toMatch(WALL);
        for (const [k, v] of Object.entries(r))
          if (v !== null && v !== '' && k.endsWith('DateTime')) expect(v).toMatch(WALL);
      }
      const dates = records.map((r) => r['publishDate']!);
      expect(dates).toEqual([...dates].sort().reverse());
      // About a year: the oldest is within 365 days of now, and older than 300 days.
      const oldest = Date.parse(`${dates.at(-1)!.replace(' ', 'T')}Z`);
      expect(NOW - oldest).toBeLessThanOrEqual(366 * 86_400_000);
      expect(NOW - oldest).toBeGreaterThan(300 * 86_400_000);
    },
  );

  it('uses both null and "" for nullable fields', () => {
    const values = suspensionRecords('nasdaq', NOW, 1).flatMap((r) => Object.values(r));
    expect(values).toContain(null);
    expect(values).toContain('');
  });

  it('is deterministic per seed and grows as market time passes', () => {
    expect(suspensionRecords('sse', NOW, 3)).toEqual(suspensionRecords('sse', NOW, 3));
    expect(suspensionRecords('sse', NOW, 3)).not.toEqual(suspensionRecords('sse', NOW, 4));
    const later = suspensionRecords('nyse', NOW + 3 * 86_400_000, 3);
    const now = suspensionRecords('nyse', NOW, 3);
    expect(later[0]!['publishDate']! > now[0]!['publishDate']!).toBe(true);
  });

  it('fills in the resumption of a halt once it has happened (a changed record)', () => {
    let checked = 0;
    for (let d = 0; d < 30 && checked < 3; d++) {
      const at = NOW - d * 86_400_000;
      const pending = suspensionRecords('sse', at, 1).find(
        (r) => r['resumeDate'] === null || r['resumeDate'] === '',
      );
      if (pending === undefined) continue;
      const same = (r: Record<string, string | null>) =>
        r['symbol'] === pending['symbol'] &&
        r['haltDate'] === pending['haltDate'] &&
        r['haltTime'] === pending['haltTime'];
      const later = suspensionRecords('sse', at + 8 * 86_400_000, 1).find(same);
      expect(later?.['resumeDate']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(later?.['publishDate']).toBe(pending['publishDate']);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
