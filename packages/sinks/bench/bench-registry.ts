/**
 * The schema registry of a benchmark: `SCHEMA_REGISTRY_URL` if set, else an Apicurio Registry
 * (in-memory, no auth) started with scripts/registry/registry.sh on 127.0.0.1 and stopped by
 * `stop()` (or when this process dies: the script stops it when its standard input closes).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface BenchRegistry {
  readonly url: string;
  /** How long the registry took to serve (JVM start included), ms; 0 when it was given. */
  readonly startMs: number;
  stop(): void;
}

export async function benchRegistry(): Promise<BenchRegistry> {
  const external = process.env['SCHEMA_REGISTRY_URL'] ?? '';
  if (external !== '') return { url: external, startMs: 0, stop: () => undefined };
  const root = join(import.meta.dirname, '..', '..', '..');
  const t0 = Date.now();
  const child = spawn('bash', [join(root, 'scripts', 'registry', 'registry.sh'), 'run'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, QUARKUS_HTTP_ACCESS_LOG_ENABLED: 'false' },
  });
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      log = (log + d.toString()).slice(-65_536);
      const m = /Listening on: http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m !== null) resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`registry.sh run exited ${code}:\n${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/apis/ccompat/v7`,
    startMs: Date.now() - t0,
    stop: () => void child.stdin.end(),
  };
}
