#!/usr/bin/env node
// Records each test file's time in a full run (vitest's JSON report, as scripts/test.sh writes it)
// into test/support/file-seconds.json, the order the test sequencer starts files in (longest
// first). Refresh it after a full run on the CI box when files were added or got much slower:
//   node scripts/test-durations.mjs .cache/vitest-report.json
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2] ?? '.cache/vitest-report.json', 'utf8'));
const seconds = Object.fromEntries(
  report.testResults
    .map((f) => [relative(process.cwd(), f.name), Math.round((f.endTime - f.startTime) / 100) / 10])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
);
const out = new URL('../test/support/file-seconds.json', import.meta.url);
writeFileSync(out, JSON.stringify(seconds, null, 2) + '\n');
console.log(`${Object.keys(seconds).length} files recorded in ${relative(process.cwd(), out.pathname)}`);
