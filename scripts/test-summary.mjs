#!/usr/bin/env node
// The closing lines of scripts/test.sh, from vitest's JSON report: the 15 slowest test files with
// their times (so the next regression is visible), then "N passed, N failed" (a line any CI reads).
// With QF_ASSERT_LOG set (test/support/count-assertions.ts), also the number of assertions.
// Usage: node scripts/test-summary.mjs REPORT.json [NAME=EXIT_CODE ...]: each NAME=EXIT_CODE is
// one more test of a step outside vitest (CI's soak day), passed when its exit code is 0.

import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2] ?? '.cache/vitest-report.json', 'utf8'));
const files = report.testResults
  .map((f) => ({
    name: relative(process.cwd(), f.name),
    ms: f.endTime - f.startTime,
    tests: f.assertionResults.length,
  }))
  .sort((a, b) => b.ms - a.ms);
const wallMs = Math.max(...report.testResults.map((f) => f.endTime)) - report.startTime;
console.log(
  `\nThe 15 slowest test files (of ${files.length}; the run took ${(wallMs / 1000).toFixed(0)} s):`,
);
for (const f of files.slice(0, 15))
  console.log(`${(f.ms / 1000).toFixed(1).padStart(8)} s  ${String(f.tests).padStart(3)} tests  ${f.name}`);
const log = process.env.QF_ASSERT_LOG;
if (log && existsSync(log)) {
  const lines = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const assertions = lines.reduce((n, l) => n + l.assertions, 0);
  console.log(`${assertions} assertions in ${lines.length} tests (${log})`);
}
const steps = process.argv.slice(3).map((a) => a.slice(a.lastIndexOf('=') + 1) === '0');
const passed = report.numPassedTests + steps.filter((ok) => ok).length;
const failed = report.numFailedTests + steps.filter((ok) => !ok).length;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
