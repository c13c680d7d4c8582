/**
 * The Kafka cluster of a benchmark: `KAFKA_BROKERS` if set, else a single-node broker started with
 * scripts/kafka/broker.sh in instance `.cache/kafka/instances/<instance>` (stopped by `stop()`, or
 * by the script's watchdog should the benchmark die).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The broker's SASL_SSL listener (scripts/kafka/broker-security.properties) and a SCRAM-SHA-512 login on it. */
export interface BenchSaslSsl {
  readonly brokers: string;
  readonly ca: Buffer;
  readonly sasl: {
    readonly mechanism: 'SCRAM-SHA-512';
    readonly username: string;
    readonly password: string;
  };
}

export interface BenchBroker {
  readonly brokers: string;
  /** Its SASL_SSL listener, when the bench started it (an external cluster: `undefined`). */
  readonly saslSsl: BenchSaslSsl | undefined;
  /** Whether the benchmark started it (else it is `KAFKA_BROKERS`). */
  readonly startedHere: boolean;
  stop(): void;
}

export function benchBroker(instance: string): BenchBroker {
  const external = process.env['KAFKA_BROKERS'] ?? '';
  if (external !== '')
    return { brokers: external, saslSsl: undefined, startedHere: false, stop: () => undefined };
  const root = join(import.meta.dirname, '..', '..', '..');
  const script = join(root, 'scripts', 'kafka', 'broker.sh');
  const env = {
    ...process.env,
    KAFKA_INSTANCE_DIR: join(root, '.cache', 'kafka', 'instances', instance),
    KAFKA_WATCH_PID: String(process.pid),
  };
  const brokers = execFileSync('bash', [script, 'start'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return {
    brokers,
    saslSsl: saslSslOf(root, env.KAFKA_INSTANCE_DIR),
    startedHere: true,
    stop: () => void execFileSync('bash', [script, 'stop'], { env, stdio: 'inherit' }),
  };
}

function saslSslOf(root: string, instance: string): BenchSaslSsl {
  const values = new Map(
    readFileSync(join(instance, 'listeners'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
  const user = readFileSync(join(root, 'scripts', 'kafka', 'test-users.txt'), 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[0] === 'SCRAM-SHA-512' && f[1] === 'qf-scram');
  return {
    brokers: values.get('SASL_SSL') ?? '',
    ca: readFileSync(join(values.get('TLS_DIR') ?? '', 'ca.pem')),
    sasl: { mechanism: 'SCRAM-SHA-512', username: user?.[1] ?? '', password: user?.[2] ?? '' },
  };
}
