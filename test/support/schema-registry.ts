/**
 * The run's schema registry: a real Apicurio Registry 3.x (scripts/registry/registry.sh, fetched
 * from Maven Central by scripts/registry/setup.sh), in-memory storage, on 127.0.0.1, started once
 * per run on first use (a shared fixture) and stopped when the run ends.
 *
 * Basic auth is on (Quarkus' embedded users, Apicurio's role-based authorization): `writer`
 * (sr-developer: may register schemas) and `reader` (sr-readonly: may only look them up), with
 * passwords made for the run. A test shares it by subject: its own topic prefix.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { sharedFixture } from './shared-fixtures.js';

export interface SchemaRegistryUser {
  readonly username: string;
  readonly password: string;
}

export interface TestSchemaRegistry {
  /** The Confluent-compatible API's base URL (`…/apis/ccompat/v7`). */
  readonly url: string;
  /** May register schemas (Apicurio role sr-developer). */
  readonly writer: SchemaRegistryUser;
  /** May only read and look up schemas (sr-readonly). */
  readonly reader: SchemaRegistryUser;
  /** How long the JVM took from start to serving, ms (measured once per run). */
  readonly startMs: number;
}

/** The run's registry (started by the first test that asks). */
export function testSchemaRegistry(): Promise<TestSchemaRegistry> {
  return sharedFixture('schema-registry');
}

/** Starts Apicurio and resolves once it serves (the shared-fixture starter). */
export async function startSchemaRegistry(
  repoRoot: string,
): Promise<{ value: TestSchemaRegistry; stop: () => Promise<void> }> {
  const writer = { username: 'writer', password: `w-${randomBytes(12).toString('hex')}` };
  const reader = { username: 'reader', password: `r-${randomBytes(12).toString('hex')}` };
  const t0 = Date.now();
  const child: ChildProcess = spawn('bash', [join(repoRoot, 'scripts', 'registry', 'registry.sh'), 'run'], {
    // stdin stays open: registry.sh stops Apicurio when it closes (this process gone, however it died).
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      QUARKUS_HTTP_AUTH_BASIC: 'true',
      QUARKUS_SECURITY_USERS_EMBEDDED_PLAIN_TEXT: 'true',
      QUARKUS_SECURITY_USERS_EMBEDDED_USERS__WRITER_: writer.password,
      QUARKUS_SECURITY_USERS_EMBEDDED_ROLES__WRITER_: 'sr-developer',
      QUARKUS_SECURITY_USERS_EMBEDDED_USERS__READER_: reader.password,
      QUARKUS_SECURITY_USERS_EMBEDDED_ROLES__READER_: 'sr-readonly',
      APICURIO_AUTH_ROLE_BASED_AUTHORIZATION: 'true',
      QUARKUS_HTTP_ACCESS_LOG_ENABLED: 'false',
    },
  });
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: string): void => {
      log = (log + d).slice(-65_536);
      const m = /Listening on: http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m !== null) resolve(Number(m[1]));
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`registry.sh run exited ${code} before serving:\n${log}`)));
  });
  const url = `http://127.0.0.1:${port}/apis/ccompat/v7`;
  await warmUp(url, writer);
  const value = { url, writer, reader, startMs: Date.now() - t0 };
  console.error(
    `schema registry: Apicurio serving ${value.url} after ${value.startMs} ms (JVM start included)`,
  );
  return {
    value,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Registers a throwaway schema once: a fresh JVM answers its first registration slowly (class
 * loading, the in-memory database), which belongs to the start-up, not to the first test.
 */
async function warmUp(url: string, user: SchemaRegistryUser): Promise<void> {
  const schema = { type: 'record', name: 'WarmUp', fields: [{ name: 'a', type: 'string' }] };
  const res = await fetch(`${url}/subjects/qft-warm-up-value/versions`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`,
      'content-type': 'application/vnd.schemaregistry.v1+json',
    },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok) throw new Error(`schema registry warm-up: ${res.status} ${await res.text()}`);
}

/** One record as read_avro_topic.py prints it. */
export interface ConfluentPythonRecord {
  readonly topic: string;
  readonly key: string;
  readonly value: Record<string, unknown>;
  /** The schema id of the wire format's header (`null` for JSON values). */
  readonly schema_id: number | null;
}

/**
 * Reads `count` records in all of `topics` from their start with Confluent's Python client
 * (librdkafka, a read_committed consumer), the values decoded by its AvroDeserializer against `registry` (basic
 * auth as `user`, passed in the environment), or as JSON text without a registry.
 */
export async function readWithConfluentPython(
  brokers: string,
  topics: string | readonly string[],
  count: number,
  registry?: { readonly url: string; readonly user?: SchemaRegistryUser },
): Promise<ConfluentPythonRecord[]> {
  const { ensurePython, REPO_ROOT } = await import('./python.js');
  const python = ensurePython();
  const topic = typeof topics === 'string' ? topics : topics.join(',');
  const args = [join(REPO_ROOT, 'test', 'python', 'read_avro_topic.py'), brokers, topic, String(count)];
  args.push(...(registry === undefined ? ['json'] : ['avro', registry.url]));
  const env = { ...process.env, READ_TIMEOUT_S: '60' };
  if (registry?.user !== undefined)
    Object.assign(env, { SR_USER: registry.user.username, SR_PASSWORD: registry.user.password });
  const child = spawn(python, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`read_avro_topic.py ${topic} exited ${code}:\n${err}`);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ConfluentPythonRecord);
}
