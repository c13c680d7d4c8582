/**
 * Refuses, as the package loads, a Node.js older than its `engines.node`: on one, undici (core's
 * HTTP client) fails at load with an unrelated `TypeError` (Node 20: `Cannot read properties of
 * undefined (reading 'bind')`), and optional parts fail later still. The entry point imports this
 * module first, so it runs before anything that would crash. `engines.node` is the one statement
 * of the version: every package of the repository carries the same.
 */
import { createRequire } from 'node:module';

/** Whether `version` (`22.22.0`, `v24.1.0`) satisfies `range` (`>=22.22.0`, the form `engines` uses here). */
export function satisfiesEngines(version: string, range: string): boolean {
  const min = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  const have = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (min === null || have === null) return true; // a form this check does not read: Node decides
  for (let i = 1; i <= 3; i++) {
    const a = Number(have[i]);
    const b = Number(min[i] ?? 0);
    if (a !== b) return a > b;
  }
  return true;
}

/** The `engines.node` of `@quoteflow/core`. */
export const NODE_ENGINES = (
  createRequire(import.meta.url)('../../package.json') as { engines: { node: string } }
).engines.node;

if (!satisfiesEngines(process.versions.node, NODE_ENGINES)) {
  throw new Error(
    `quoteflow needs Node.js ${NODE_ENGINES} (package.json "engines"); this is Node.js ${process.versions.node} ` +
      `(${process.execPath}). Install a newer Node.js (24 LTS, or 22 from 22.22) and run again.`,
  );
}
