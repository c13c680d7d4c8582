import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

// Each package's public API is kept as packages/<p>/api/<p>.api.md (API Extractor, from the built
// declarations): a change to the surface must come with the report, so that review sees it.
it('keeps every package’s API report up to date with its exports', () => {
  const run = spawnSync(process.execPath, ['scripts/api-reports.mjs', '--check'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(run.status, `${run.stderr}\n(update the reports: pnpm build && pnpm api)`).toBe(0);
}, 120_000);
