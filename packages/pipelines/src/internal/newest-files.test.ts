import fc from 'fast-check';
import { expect, it } from 'vitest';
import { NewestFiles, SUMMARY_FILES_AT_MOST } from './newest-files.js';

it('keeps the newest files of a run, at most SUMMARY_FILES_AT_MOST, and counts them all', () => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 700 }), { maxLength: 12 }), (batches) => {
      const files = new NewestFiles<number>();
      const all: number[] = [];
      for (const size of batches) {
        const batch = Array.from({ length: size }, (_, i) => all.length + i);
        files.add(batch);
        all.push(...batch);
      }
      expect(files.count).toBe(all.length);
      expect(files.newest).toEqual(all.slice(Math.max(0, all.length - SUMMARY_FILES_AT_MOST)));
    }),
  );
});
