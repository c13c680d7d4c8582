/**
 * The secured listeners of the test broker (scripts/kafka/broker-security.properties), beside its
 * PLAINTEXT one: where they listen, where their key material is, and who may log in on them.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './kafka-global-setup.js';

const run = promisify(execFile);

/** The secured listeners of one broker, `127.0.0.1:PORT` each. */
export interface SecureListeners {
  /** TLS, then SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). */
  readonly saslSsl: string;
  /** TLS with a client certificate (CN=qf-client). */
  readonly mtls: string;
  /** TLS whose certificate names wrong-name.invalid, not 127.0.0.1. */
  readonly wrongName: string;
  /** scripts/kafka/tls.sh's directory on the host: ca.pem, other-ca.pem, client.pem, client.key, … */
  readonly tlsDir: string;
}

/** The key material's directory, made by scripts/kafka/tls.sh on first use (once; it takes a lock). */
export async function ensureKafkaTls(): Promise<string> {
  const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'kafka', 'tls.sh')], { env: process.env });
  return stdout.trim().split('\n').pop() ?? '';
}

/** The listeners broker.sh recorded in an instance directory (`listeners`: NAME=VALUE lines). */
export async function hostListeners(instanceDir: string): Promise<SecureListeners> {
  const text = await readFile(join(instanceDir, 'listeners'), 'utf8');
  const values = new Map(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
  const get = (name: string): string => {
    const v = values.get(name);
    if (v === undefined) throw new Error(`${instanceDir}/listeners has no ${name}`);
    return v;
  };
  return { saslSsl: get('SASL_SSL'), mtls: get('MTLS'), wrongName: get('WRONGNAME'), tlsDir: get('TLS_DIR') };
}

/** One SASL user of the test broker (scripts/kafka/test-users.txt). */
export interface TestUser {
  readonly mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly username: string;
  readonly password: string;
}

/** The test broker's SASL users by name: qf-plain, qf-scram, qf-scram256 (super users), qf-denied (no ACL). */
export function testUser(name: 'qf-plain' | 'qf-scram' | 'qf-scram256' | 'qf-denied'): TestUser {
  const line = readFileSync(join(REPO_ROOT, 'scripts', 'kafka', 'test-users.txt'), 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1] === name && !f[0]?.startsWith('#'));
  if (line === undefined) throw new Error(`no user ${name} in scripts/kafka/test-users.txt`);
  return { mechanism: line[0] as TestUser['mechanism'], username: name, password: line[2] ?? '' };
}

/** kcat/librdkafka client properties of a SASL_SSL login as `user` (the CA's certificate trusted). */
export function saslSslProperties(listeners: SecureListeners, user: TestUser): Record<string, string> {
  return {
    'security.protocol': 'SASL_SSL',
    'sasl.mechanism': user.mechanism,
    'sasl.username': user.username,
    'sasl.password': user.password,
    'ssl.ca.location': join(listeners.tlsDir, 'ca.pem'),
  };
}

/** Client properties of an mTLS login (CN=qf-client) on the MTLS listener. */
export function mtlsProperties(listeners: SecureListeners): Record<string, string> {
  return {
    'security.protocol': 'SSL',
    'ssl.ca.location': join(listeners.tlsDir, 'ca.pem'),
    'ssl.certificate.location': join(listeners.tlsDir, 'client.pem'),
    'ssl.key.location': join(listeners.tlsDir, 'client.key'),
    'ssl.key.password': readFileSync(join(listeners.tlsDir, 'client.key.password'), 'utf8'),
  };
}

/** Properties as `-X KEY=VALUE` arguments. */
export function dashX(properties: Readonly<Record<string, string>>): string[] {
  return Object.entries(properties).flatMap(([k, v]) => ['-X', `${k}=${v}`]);
}
