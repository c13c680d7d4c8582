import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { codeList } from './parse-args.js';
import { UsageError } from './usage-error.js';

/** Adds `--codes LIST` and `--codes-file FILE` (contract.md). */
export function addCodesOptions(
  cmd: Command,
  what = 'product codes',
  example = 'AAPL.US,700.HK,BTCUSDT',
): Command {
  return cmd
    .option('--codes <list>', `${what}, comma-separated (${example})`, codeList)
    .option('--codes-file <file>', `${what}, one per line (# starts a comment)`);
}

/** The codes of `--codes` or `--codes-file` (exactly one of them), in order, without duplicates. */
export async function resolveCodes(
  opts: { codes?: string[]; codesFile?: string },
  cwd: string,
  flag = '--codes',
): Promise<string[]> {
  if (opts.codes !== undefined && opts.codesFile !== undefined) {
    throw new UsageError(`${flag} and ${flag}-file are mutually exclusive; give one`);
  }
  if (opts.codes !== undefined) return opts.codes;
  if (opts.codesFile === undefined) throw new UsageError(`${flag} or ${flag}-file is required`);
  let text: string;
  try {
    text = await readFile(resolve(cwd, opts.codesFile), 'utf8');
  } catch (err) {
    throw new UsageError(
      `${flag}-file ${JSON.stringify(opts.codesFile)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  const codes = [
    ...new Set(
      text
        .split(/\r?\n/)
        .map((line) => line.replace(/#.*/, '').trim())
        .filter((line) => line !== ''),
    ),
  ];
  if (codes.length === 0)
    throw new UsageError(`${flag}-file ${JSON.stringify(opts.codesFile)} lists no codes`);
  const bad = codes.find((c) => /\s|,/.test(c));
  if (bad !== undefined)
    throw new UsageError(`${flag}-file: ${JSON.stringify(bad)} is not one product code per line`);
  return codes;
}
