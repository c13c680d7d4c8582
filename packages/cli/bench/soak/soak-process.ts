// One `quoteflow` command of the soak as a child process, as users run it: started, killed with
// SIGKILL and started again with the same arguments, stopped with SIGTERM, and sampled (its own
// Prometheus metrics on --metrics-port, its descriptors from /proc).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { QUOTEFLOW_BIN } from '../../../../test/support/quoteflow-process.js';

/** What one scrape of a process gives. */
export interface ProcessSample {
  readonly atMs: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** V8's heap as reserved, and the memory of Buffers and WebAssembly outside it (for the RSS's parts). */
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly fds: number;
  readonly handles: number;
  /** Event-loop delay p99 since the previous scrape (prom-client resets it at each). */
  readonly eventLoopP99S: number;
  readonly cpuS: number;
  /** Every metric line of the scrape, by name and labels (`name{labels}` → value). */
  readonly metrics: ReadonlyMap<string, number>;
}

/** A free TCP port on 127.0.0.1 (for --metrics-port, kept across restarts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** Prometheus text → `name{labels}` → value (comments and blank lines skipped). */
export function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

/** The sum of every series of metric `name` (all label sets). */
export function sumOf(metrics: ReadonlyMap<string, number>, name: string): number {
  let sum = 0;
  for (const [key, value] of metrics) if (key === name || key.startsWith(`${name}{`)) sum += value;
  return sum;
}

export class SoakProcess {
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> = Promise.resolve(null);
  #stderr = '';
  #expectedExit = false;
  /** Starts so far (1 + restarts). */
  starts = 0;
  /** Exits nobody asked for, with the end of their stderr. */
  readonly crashes: { atMs: number; code: number | null; stderr: string }[] = [];

  constructor(
    readonly name: string,
    private readonly args: readonly string[],
    private readonly env: Readonly<Record<string, string>>,
    readonly metricsPort: number,
    private readonly now: () => number,
    /** Where each start's stderr is kept (`<name>-<start>.log`). */
    private readonly logDir: string,
  ) {}

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the command (again, after a kill). */
  start(): void {
    this.starts++;
    this.#expectedExit = false;
    this.#stderr = '';
    const child = spawn(QUOTEFLOW_BIN, [...this.args, '--metrics-port', String(this.metricsPort)], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.pipe(createWriteStream(join(this.logDir, `${this.name}-${this.starts}.log`)));
    child.stderr!.on('data', (c: Buffer) => {
      this.#stderr = (this.#stderr + c.toString()).slice(-20_000);
    });
    this.#child = child;
    this.#exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        if (!this.#expectedExit)
          this.crashes.push({ atMs: this.now(), code, stderr: this.#stderr.slice(-4_000) });
        resolve(code);
      }),
    );
  }

  /** Whether the process runs (it did not exit). */
  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Whether it exited without being told to (killed or stopped by the harness is not that). */
  get crashed(): boolean {
    return this.#child !== undefined && !this.running && !this.#expectedExit;
  }

  /** kill -9, waited for. */
  async kill9(): Promise<void> {
    this.#expectedExit = true;
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM (the command flushes and exits 0), waited for: its exit code. */
  async stop(): Promise<number | null> {
    this.#expectedExit = true;
    this.#child?.kill('SIGTERM');
    return this.#exited;
  }

  /** The end of what it wrote to stderr since its last start. */
  stderrTail(): string {
    return this.#stderr.slice(-4_000);
  }

  /** Its metrics and descriptors now, or undefined while it does not answer (starting, killed). */
  async sample(): Promise<ProcessSample | undefined> {
    const pid = this.pid;
    if (pid === undefined || !this.running) return undefined;
    let text: string;
    try {
      const res = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (!res.ok) return undefined;
      text = await res.text();
    } catch {
      return undefined;
    }
    const metrics = parsePrometheus(text);
    let fds = Number.NaN;
    try {
      fds = (await readdir(`/proc/${pid}/fd`)).length;
    } catch {
      // exited meanwhile
    }
    return {
      atMs: this.now(),
      rssBytes: metrics.get('quoteflow_process_resident_memory_bytes') ?? Number.NaN,
      heapUsedBytes: metrics.get('quoteflow_nodejs_heap_size_used_bytes') ?? Number.NaN,
      heapTotalBytes: metrics.get('quoteflow_nodejs_heap_size_total_bytes') ?? Number.NaN,
      externalBytes: metrics.get('quoteflow_nodejs_external_memory_bytes') ?? Number.NaN,
      fds,
      handles: sumOf(metrics, 'quoteflow_nodejs_active_handles'),
      eventLoopP99S: metrics.get('quoteflow_nodejs_eventloop_lag_p99_seconds') ?? Number.NaN,
      cpuS: metrics.get('quoteflow_process_cpu_seconds_total') ?? Number.NaN,
      metrics,
    };
  }

  /** CPU seconds (user + system) of the process so far (0 when it is gone). */
  cpuSeconds(): Promise<number> {
    return cpuSecondsOf(this.pid);
  }
}

/** CPU seconds (user + system) of process `pid` so far, from /proc (0 when it is gone). */
export async function cpuSecondsOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in ticks.
    const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return (Number(stat[11]) + Number(stat[12])) / 100;
  } catch {
    return 0;
  }
}
