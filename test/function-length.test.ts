/**
 * No function over 80 lines in the packages' sources: scripts/checks/long-functions.mjs (run by
 * `pnpm check` and CI) counts every function (declarations, methods, constructors, nested and
 * anonymous ones) and fails on one longer than 80 lines.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const MAX_LINES = 80;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function check(...args: string[]) {
  const run = spawnSync(process.execPath, ['scripts/checks/long-functions.mjs', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, listed: run.stdout.split('\n').filter(Boolean) };
}

it(`has no function over ${MAX_LINES} lines`, () => {
  const { status, listed } = check(String(MAX_LINES));
  expect(listed, 'split these functions into named pieces with one job each').toEqual([]);
  expect(status).toBe(0);
});

it('counts constructors, methods, nested functions and callbacks, and fails on a long one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'long-functions-'));
  dirs.push(dir);
  const body = (n: number) => Array.from({ length: n }, (_, i) => `    void ${i};`).join('\n');
  writeFileSync(
    join(dir, 'fixture.ts'),
    [
      'export class Fixture {',
      '  constructor() {',
      body(12),
      '  }',
      '  method(): void {',
      body(12),
      '  }',
      '}',
      'export function outer(): void {',
      '  function nested(): void {',
      body(12),
      '  }',
      '  [1].forEach(() => {',
      body(12),
      '  });',
      '  nested();',
      '}',
      'export function short(): void {}',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'fixture.test.ts'), `export function inTest(): void {\n${body(40)}\n}\n`);
  const { status, listed } = check('10', dir);
  expect(listed.map((l) => /^\S+:(\d+) (.+) (\d+) lines$/.exec(l)!.slice(1))).toEqual([
    ['2', 'constructor', '14'],
    ['16', 'method', '14'],
    ['31', 'outer', '31'],
    ['32', 'nested', '14'],
    ['46', '<anonymous>', '14'],
  ]);
  expect(status).toBe(1);
  expect(check('40', dir).status).toBe(0);
});
