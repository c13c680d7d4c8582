import { describe, expect, it } from 'vitest';
import { syncGroupName } from './cluster-worker.js';

describe('syncGroupName', () => {
  it('names the same universe alike whatever the order, and different universes differently', () => {
    expect(syncGroupName(['B', 'A'], [8, 1])).toBe(syncGroupName(['A', 'B'], [1, 8]));
    expect(syncGroupName(['A', 'B'], [1])).not.toBe(syncGroupName(['A', 'B'], [1, 8]));
    expect(syncGroupName(['A'], [1])).not.toBe(syncGroupName(['B'], [1]));
    expect(syncGroupName(['A'], [1])).toMatch(/^kline-sync:[0-9a-f]{16}$/);
  });
});
