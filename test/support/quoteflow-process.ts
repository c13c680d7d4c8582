// Runs the built `quoteflow` binary (packages/cli/bin/quoteflow, after `pnpm exec tsc -b`) as a
// real child process, with stderr piped or on a real pseudo-terminal.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';

export const QUOTEFLOW_BIN = resolve(import.meta.dirname, '../../packages/cli/bin/quoteflow');

export interface QuoteflowRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

export interface QuoteflowChild {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything written to stderr so far. */
  stderr(): string;
  readonly done: Promise<QuoteflowRun>;
}

/** Starts `quoteflow ARGS` with stdout and stderr piped (so neither is a terminal). */
export function startQuoteflow(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
): QuoteflowChild {
  const started = Date.now();
  const child = spawn(QUOTEFLOW_BIN, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<QuoteflowRun>((res) =>
    child.on('close', (code) => res({ code, stdout, stderr, elapsedMs: Date.now() - started })),
  );
  return { child, stderr: () => stderr, done };
}

/** Runs `quoteflow ARGS` to its end with stdout and stderr piped. */
export function runQuoteflow(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<QuoteflowRun> {
  return startQuoteflow(args, env, cwd).done;
}

/**
 * Runs `quoteflow ARGS` on a real pseudo-terminal (util-linux `script`): stdout and stderr are a
 * terminal, and what the terminal received comes back as `stdout` (both streams, in order).
 */
export function runQuoteflowInTerminal(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<QuoteflowRun> {
  const quoted = [QUOTEFLOW_BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const started = Date.now();
  const child = spawn('script', ['-qefc', quoted, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm-256color', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((res) =>
    child.on('close', (code) => res({ code, stdout, stderr, elapsedMs: Date.now() - started })),
  );
}

/** Every file under `dir` (none when it does not exist). */
export async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The data files of a dataset directory: {@link filesUnder} without the Delta log
 * (`_delta_log/`, which the contract allows beside the data files).
 */
export async function dataFilesUnder(dir: string): Promise<string[]> {
  return (await filesUnder(dir)).filter((f) => !f.split(sep).includes('_delta_log'));
}
