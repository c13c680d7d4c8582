#!/usr/bin/env node
// The public API of every package as a checked-in report, `packages/<p>/api/<p>.api.md`, made by
// API Extractor from the built declarations (`dist/index.d.ts`, so build first): a change to what a
// package exports, or to the type of an export, shows up in review as a change to that file.
//
//   node scripts/api-reports.mjs           rewrites the reports (`pnpm api`)
//   node scripts/api-reports.mjs --check   exits 1 naming each report that is stale
//
// API Extractor ships its own TypeScript compiler, the same version as the repository's.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const packages = readdirSync(join(root, 'packages'))
  .filter((p) => existsSync(join(root, 'packages', p, 'package.json')))
  .filter((p) => only.length === 0 || only.includes(p))
  .sort();

const stale = [];
for (const name of packages) {
  const dir = join(root, 'packages', name);
  if (!existsSync(join(dir, 'dist', 'index.d.ts'))) {
    console.error(`api: packages/${name}/dist/index.d.ts is missing: build first (pnpm exec tsc -b)`);
    process.exit(2);
  }
  mkdirSync(join(dir, 'api'), { recursive: true });
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: dir,
      mainEntryPointFilePath: '<projectFolder>/dist/index.d.ts',
      compiler: { tsconfigFilePath: '<projectFolder>/tsconfig.json' },
      apiReport: {
        enabled: true,
        reportFileName: '<unscopedPackageName>',
        reportFolder: '<projectFolder>/api/',
        reportTempFolder: join(root, '.cache', 'api', name),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // Findings go into the report (a reviewer sees them), not to the console; no release tags
        // (@public, @beta) are used: what the index exports is public.
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          // `{@link close}` and the like are for editors, which resolve them; API Extractor cannot.
          'ae-unresolved-link': { logLevel: 'none', addToApiReportFile: false },
          // Each names a source line, so every edit above an undocumented member changed a report
          // that no API change touched; the reports keep the API itself.
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
      },
    },
    configObjectFullPath: join(dir, 'api-extractor.json'),
    packageJsonFullPath: join(dir, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: !check,
    messageCallback: (message) => {
      if (message.logLevel === 'none' || message.logLevel === 'verbose' || message.logLevel === 'info')
        message.handled = true;
    },
  });
  if (result.errorCount > 0) {
    console.error(`api: API Extractor failed on packages/${name} (${result.errorCount} errors)`);
    process.exit(1);
  }
  if (check && result.apiReportChanged) stale.push(`packages/${name}/api/${name}.api.md`);
  else if (!check)
    console.log(`api: packages/${name}/api/${name}.api.md${result.apiReportChanged ? ' updated' : ''}`);
}
if (stale.length > 0) {
  console.error(
    `api: the public API changed and these reports do not show it yet:\n  ${stale.join('\n  ')}\n` +
      'Run `pnpm build && pnpm api` and commit the reports (review the change: it is the API users see).',
  );
  process.exit(1);
}
