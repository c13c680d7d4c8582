/**
 * Vitest's order of the test files: longest first, by each file's time in a full run on the CI box
 * (file-seconds.json, written by scripts/test-durations.mjs), across all projects. With more
 * workers than cores, a long file that starts last makes the whole run wait for it; vitest's own
 * order runs project by project (the unit files after every integration file) and, on a fresh
 * clone (CI), by file size. Longest first lets the many short files fill the gaps at the end.
 * A file not in the list yet (new) starts first, as vitest runs unknown files first.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Seconds each file took in the last recorded full run, by path from the repository's root. */
export const FILE_SECONDS: Readonly<Record<string, number>> = JSON.parse(
  readFileSync(new URL('./file-seconds.json', import.meta.url), 'utf8'),
) as Record<string, number>;

/**
 * Files that take much longer on a fresh machine (CI) than in the run recorded: a recorded run on a
 * machine that had run the suite before would start them late.
 */
const FRESH_MACHINE_SECONDS: Readonly<Record<string, number>> = {
  'test/container-image.test.ts': 130, // builds the image (about 5 s once podman has it)
};

/** A file's recorded seconds; Infinity for a file the list does not know. */
export function recordedSeconds(moduleId: string): number {
  const file = relative(ROOT, moduleId);
  return FRESH_MACHINE_SECONDS[file] ?? FILE_SECONDS[file] ?? Number.POSITIVE_INFINITY;
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: files of equal time keep vitest's order.
    return sorted.sort((a, b) => recordedSeconds(b.moduleId) - recordedSeconds(a.moduleId));
  }
}
