// A worker process of the cluster benches: a TypeScript script run with tsx, its JSON lines on
// stdout collected as they come (not a benchmark itself).
import { spawn, type ChildProcess } from 'node:child_process';

/** A running worker process and the JSON lines it printed so far. */
export interface BenchWorker {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<number | null>;
}

/** Starts `script` with `env` added to this process's environment. */
export function spawnWorker(script: string, env: Record<string, string>): BenchWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  return { child, lines, exited: new Promise((resolve) => child.once('exit', resolve)) };
}
