/**
 * One error model: every error class of the packages is a `QuoteflowError`, every code is in
 * core's registry (`ERROR_CODES`, each with what it means and what to do), every code has the
 * CLI's exit status, and docs/reference.md's table of error codes says both, code by code.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as cli from '@quoteflow/cli';
import * as cluster from '@quoteflow/cluster';
import * as core from '@quoteflow/core';
import * as coreInternal from '@quoteflow/core/internal';
import * as operators from '@quoteflow/operators';
import * as operatorsInternal from '@quoteflow/operators/internal';
import * as pipelines from '@quoteflow/pipelines';
import * as pipelinesInternal from '@quoteflow/pipelines/internal';
import * as report from '@quoteflow/report';
import * as sinks from '@quoteflow/sinks';
import * as sinksInternal from '@quoteflow/sinks/internal';
import { describe, expect, it } from 'vitest';
import { EXIT_STATUS_OF_CODE, exitCodeFor } from '../packages/cli/src/internal/exit-code-for.js';
import { ERROR_CODE_DESCRIPTIONS, ERROR_CODES, type ErrorCode } from '../packages/core/src/error-codes.js';

const ROOT = join(import.meta.dirname, '..');

/**
 * `QF_` names that are not error codes, so not in the registry: codes of Node process warnings
 * (`process.emitWarning`) and the name of the CLI's test-only clock variable.
 */
const NOT_ERROR_CODES = ['QF_QUOTA_STATE_AHEAD', 'QF_CALENDAR_DATA_ENDED', 'QF_TEST_CLOCK'];

/** Sources that may declare an error class of their own, and why. */
const OWN_ERROR_CLASSES: Readonly<Record<string, string>> = {
  'packages/core/src/errors.ts': 'QuoteflowError itself',
};

/** The packages' sources, tests left out. The simulator is not there: it does not import core. */
async function sources(): Promise<{ path: string; text: string }[]> {
  const paths: string[] = [];
  for (const pkg of await readdir(join(ROOT, 'packages'))) {
    if (pkg === 'simulator') continue;
    for (const f of await readdir(join(ROOT, 'packages', pkg, 'src'), { recursive: true }))
      if (f.endsWith('.ts') && !f.endsWith('.test.ts')) paths.push(`packages/${pkg}/src/${f}`);
  }
  return Promise.all(
    paths.sort().map(async (path) => ({ path, text: await readFile(join(ROOT, path), 'utf8') })),
  );
}

/** The rows of the table under `### Error codes`: code, exit status, meaning, what to do. */
function documentedCodes(doc: string): string[][] {
  const at = doc.indexOf('\n### Error codes\n');
  expect(at, 'docs/reference.md has a "### Error codes" section').toBeGreaterThan(0);
  const section = doc.slice(at + 1).split(/\n#{2,3} /)[0]!;
  return section
    .split('\n')
    .filter((l) => /^\| `QF_/.test(l))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/^`|`$/g, '').replace(/\\\*/g, '*')),
    );
}

describe('the error registry', () => {
  it('describes every code in one line: what it means and what to do', () => {
    expect(Object.keys(ERROR_CODE_DESCRIPTIONS).sort()).toEqual([...ERROR_CODES].sort());
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) {
      const { meaning, action } = ERROR_CODE_DESCRIPTIONS[code];
      for (const text of [meaning, action]) {
        expect(text, code).toMatch(/^\S.*[^.\s]$/); // a clause, for a table cell
        expect(text, code).not.toMatch(/[\n|]/);
      }
    }
    expect(Object.keys(core).filter((name) => name === 'ERROR_CODES')).toEqual(['ERROR_CODES']);
    expect(core.ERROR_CODES).toEqual(ERROR_CODES);
  });

  it('gives every code its exit status, also from deep in a cause chain', () => {
    expect(Object.keys(EXIT_STATUS_OF_CODE).sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const status = EXIT_STATUS_OF_CODE[code];
      expect(Object.values(cli.EXIT), code).toContain(status);
      const err = new core.QuoteflowError(code, 'x');
      expect(exitCodeFor(err), code).toBe(status);
      const wrapped = new Error('outer', {
        cause: new pipelines.PipelineError('QF_PIPELINE', 'y', { cause: err }),
      });
      expect(exitCodeFor(wrapped), `${code} under a pipeline's failure`).toBe(status);
    }
    // The contract's statuses (contract.md, docs/reference.md "Exit codes").
    expect(exitCodeFor(new core.InvalidOptionError('codes', 'x'))).toBe(cli.EXIT.usage);
    expect(exitCodeFor(new sinks.FormatVersionError('table', 9, 9))).toBe(cli.EXIT.usage);
    expect(exitCodeFor(new core.QuoteflowError('QF_UNAUTHORIZED_TOKEN', 'x'))).toBe(cli.EXIT.refused);
    expect(exitCodeFor(new core.QuoteflowError('QF_DAILY_BUDGET_SPENT', 'x'))).toBe(cli.EXIT.budgetSpent);
    expect(exitCodeFor(new sinks.FileSinkError('QF_FILE_WRITE', 'x'))).toBe(cli.EXIT.failure);
    expect(exitCodeFor(new Error('anything else'))).toBe(cli.EXIT.failure);
  });

  it('is the table of error codes in docs/reference.md, row by row', async () => {
    const doc = await readFile(join(ROOT, 'docs/reference.md'), 'utf8');
    const expected = ERROR_CODES.map((code) => {
      const { meaning, action } = ERROR_CODE_DESCRIPTIONS[code];
      return [code, String(EXIT_STATUS_OF_CODE[code]), meaning, action];
    });
    const table = expected.map((r) => `| \`${r[0]}\` | ${r.slice(1).join(' | ')} |`).join('\n');
    expect(documentedCodes(doc), `docs/reference.md, "### Error codes", should read:\n${table}`).toEqual(
      expected,
    );
  });
});

describe('every error of the packages', () => {
  it('is a QuoteflowError: no error class of their own, no code outside the registry', async () => {
    const problems: string[] = [];
    const registered = new Set<string>([...ERROR_CODES, ...NOT_ERROR_CODES]);
    for (const { path: file, text } of await sources()) {
      for (const m of text.matchAll(/class (\w+)(?:<[^>]*>)? extends (?:Error|TypeError|RangeError)\b/g))
        if (OWN_ERROR_CLASSES[file] === undefined) problems.push(`${file}: ${m[1]} extends Error`);
      for (const m of text.matchAll(/'(QF_[A-Z_]+)'/g))
        if (!registered.has(m[1]!)) problems.push(`${file}: ${m[1]} is not in core's ERROR_CODES`);
    }
    expect(problems).toEqual([]);
  });

  it('that a package exports (also from its internal entry) extends QuoteflowError, with a registered code', () => {
    const exported = {
      cli,
      cluster,
      core,
      coreInternal,
      operators,
      operatorsInternal,
      pipelines,
      pipelinesInternal,
      report,
      sinks,
      sinksInternal,
    };
    const classes: string[] = [];
    for (const [pkg, names] of Object.entries(exported))
      for (const [name, value] of Object.entries(names as Record<string, unknown>)) {
        if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue;
        classes.push(name);
        if (value !== core.QuoteflowError)
          expect(value.prototype, `${pkg}'s ${name}`).toBeInstanceOf(core.QuoteflowError);
      }
    // The classes of every package, not core's alone.
    expect(classes).toEqual(
      expect.arrayContaining(['ClusterError', 'PipelineError', 'FileSinkError', 'KafkaKlineSinkError']),
    );
    const codes: ErrorCode[] = [
      new cluster.ClusterError('QF_REDIS', 'x').code,
      new sinksInternal.KafkaClusterError('timeout', 'x').code,
      new sinks.SchemaRegistryError('http://registry', 'topic-value', 'x').code,
      new sinks.MissingPackageError('datasets', [{ name: 'apache-arrow', range: '^21' }]).code,
    ];
    for (const code of codes) expect(ERROR_CODES).toContain(code);
  });
});
