/**
 * The built JavaScript of a workspace source file, for a child process that runs on `node` alone
 * (a `.mjs` script of the crash tests): loading TypeScript through tsx costs each start about
 * 0.4 CPU-seconds more, and those tests start a few dozen children. The test command builds the
 * packages first (scripts/setup.sh); run on its own after an edit, a test is told to build rather
 * than silently run yesterday's code.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { REPO_ROOT } from './python.js';

const PACKAGES = join(REPO_ROOT, 'packages');
let checked = false;

/**
 * `packages/PKG/dist/PATH.js` for `packages/PKG/src/PATH.ts` (absolute, or relative to
 * `packages/`); throws when a package's sources changed after its last build.
 */
export function builtModule(source: string): string {
  if (!checked) expectBuildCurrent();
  checked = true;
  const parts = relative(PACKAGES, join(PACKAGES, source)).split(sep);
  if (parts[1] !== 'src' || !parts.at(-1)!.endsWith('.ts'))
    throw new Error(`builtModule: ${source} is not a file under packages/PKG/src/`);
  return join(PACKAGES, parts[0]!, 'dist', ...parts.slice(2)).replace(/\.ts$/, '.js');
}

/** Every package's build (its `dist/.tsbuildinfo`, which `tsc -b` touches) is newer than its sources. */
function expectBuildCurrent(): void {
  for (const pkg of readdirSync(PACKAGES)) {
    const src = join(PACKAGES, pkg, 'src');
    const sources = readdirSync(src, { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile() && !/\.(test|bench)\.ts$/.test(e.name),
    );
    const built = statSync(join(PACKAGES, pkg, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false });
    const newer = sources.find(
      (e) => built === undefined || statSync(join(e.parentPath, e.name)).mtimeMs > built.mtimeMs,
    );
    if (newer !== undefined)
      throw new Error(
        `packages/${pkg} changed since its last build (${relative(REPO_ROOT, join(newer.parentPath, newer.name))}): run pnpm build`,
      );
  }
}
