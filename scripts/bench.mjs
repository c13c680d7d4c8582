#!/usr/bin/env node
// Runs every benchmark script (`packages/*/bench/*.bench.ts`, `bench/*.bench.ts`) one after the
// other with tsx, against the built packages, and prints each one's markdown report.
// `pnpm bench [filter]` runs only the scripts whose path contains `filter`.
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filter = process.argv[2] ?? '';
const dirs = [
  join(root, 'bench'),
  ...readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'bench')),
];
const scripts = dirs
  .filter((d) => existsSync(d))
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.bench.ts'))
      .map((f) => join(d, f)),
  )
  // Matched against the path inside the repository: a checkout under a directory named `kafka`
  // must not match every script.
  .filter((f) => f.slice(root.length).includes(filter))
  .sort();
if (scripts.length === 0) {
  console.error(`bench: no benchmark matches ${JSON.stringify(filter)}`);
  process.exit(2);
}
let failed = 0;
for (const script of scripts) {
  console.log(`\n## ${script.slice(root.length)}\n`);
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
    stdio: 'inherit',
    cwd: root,
  });
  if (run.status !== 0) {
    failed++;
    console.error(`bench: ${script} exited ${run.status}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
