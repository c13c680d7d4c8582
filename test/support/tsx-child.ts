/**
 * A TypeScript child process (`node --import tsx SCRIPT ARGS`, run from the repository root) for
 * the crash tests: started, then waited for until it prints `ready`; killed with SIGKILL at will.
 * A `.mjs` script (importing the built modules, built-module.ts) runs on `node` alone.
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT } from './python.js';

export interface TsxChild {
  /** Everything it wrote to stdout so far. */
  out(): string;
  /** Everything it wrote to stderr so far. */
  err(): string;
  /** SIGKILL. */
  kill(): void;
  /** Sends a signal (SIGSTOP pauses it as a stalled worker, SIGCONT lets it go on). */
  signal(signal: NodeJS.Signals): void;
  /** The signal that ended it (`null` for an exit of its own, `SIGABRT` standing for a non-zero code). */
  readonly exited: Promise<NodeJS.Signals | null>;
}

/** Starts `script` and resolves once it printed `ready` (rejects if it exits first). */
export async function startTsxChild(
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<TsxChild> {
  const loader = script.endsWith('.mjs') ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...loader, script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? (code === 0 ? null : 'SIGABRT'))),
  );
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (!out.includes('ready')) return;
      clearInterval(poll);
      resolve();
    }, 5);
    void exited.then(() => {
      clearInterval(poll);
      reject(new Error(`${script} exited before it started: ${err}`));
    });
  });
  return {
    out: () => out,
    err: () => err,
    kill: () => child.kill('SIGKILL'),
    signal: (signal) => void child.kill(signal),
    exited,
  };
}
