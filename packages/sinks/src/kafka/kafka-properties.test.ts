import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { kafkaSettingsFromProperties } from './kafka-properties.js';
import { describeKafkaFailure } from './kafka-failure.js';

// A PEM key encrypted with a password, made here (no certificate is needed for the key checks).
const { privateKey } = generateKeyPairSync('ec', {
  namedCurve: 'P-256',
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'key-Pw-0417abcd' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const files: Record<string, string> = { '/k.pem': privateKey, '/bad.pem': 'not a certificate' };
const read = (path: string): Buffer => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return Buffer.from(text);
};
const settings = (p: Record<string, string>) => kafkaSettingsFromProperties(p, read);
const SASL = {
  'security.protocol': 'SASL_SSL',
  'sasl.mechanism': 'SCRAM-SHA-512',
  'sasl.username': 'u',
  'sasl.password': 'sasl-Pw-secret-77',
};

describe('kafkaSettingsFromProperties', () => {
  it('maps librdkafka names to sink options (sasl.mechanisms and lower case taken too)', () => {
    expect(
      settings({
        'bootstrap.servers': 'a:9093,b:9093',
        'security.protocol': 'sasl_ssl',
        'sasl.mechanisms': 'scram-sha-256',
        'sasl.username': 'u',
        'sasl.password': 'p',
        'ssl.endpoint.identification.algorithm': 'none',
        'client.id': 'qf-1',
        'compression.type': 'zstd',
      }),
    ).toEqual({
      brokers: 'a:9093,b:9093',
      clientId: 'qf-1',
      compression: 'zstd',
      sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' },
      tls: { checkHostname: false },
    });
    expect(settings({ 'bootstrap.servers': 'a:1' })).toEqual({ brokers: 'a:1' });
  });

  it.each([
    [{ 'sasl.jaas.config': 'x' }, 'sasl.jaas.config', 'unknown Kafka property'],
    [
      { 'security.protocol': 'TLS' },
      'security.protocol',
      'must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL',
    ],
    [{ ...SASL, 'sasl.mechanism': 'OAUTHBEARER' }, 'sasl.mechanism', 'OAUTHBEARER is not supported'],
    [
      { ...SASL, 'sasl.mechanism': 'GSSAPI' },
      'sasl.mechanism',
      'must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512',
    ],
    [{ ...SASL, 'sasl.password': '' }, 'sasl.password', 'is needed'],
    [{ 'sasl.username': 'u' }, 'sasl.username', 'needs security.protocol SASL_SSL or SASL_PLAINTEXT'],
    [{ 'ssl.ca.location': '/x' }, 'ssl.ca.location', 'needs security.protocol SSL or SASL_SSL'],
    [
      { 'security.protocol': 'SSL', 'ssl.ca.location': '/none.pem' },
      'ssl.ca.location',
      'cannot read "/none.pem" (ENOENT)',
    ],
    [
      { 'security.protocol': 'SSL', 'ssl.ca.location': '/bad.pem' },
      'ssl.ca.location',
      'is not a PEM certificate',
    ],
    [{ 'security.protocol': 'SSL', 'ssl.key.location': '/k.pem' }, 'ssl.key.location', 'needs both'],
    [{ 'bootstrap.servers': 'a' }, 'bootstrap.servers', 'must be host:port'],
    [{ 'compression.type': 'brotli' }, 'compression.type', 'must be one of none, gzip'],
    [
      { 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': 'dns' },
      'ssl.endpoint.identification.algorithm',
      'https or none',
    ],
  ])('refuses %j naming %s', (props, option, message) => {
    let error: unknown;
    try {
      settings(props);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'QF_INVALID_OPTION', option });
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain('sasl-Pw-secret-77');
  });

  it('opens an encrypted key with ssl.key.password, and names ssl.key.password when it does not', () => {
    const base = {
      'security.protocol': 'SSL',
      'ssl.key.location': '/k.pem',
      'ssl.certificate.location': '/k.pem',
    };
    expect(() => settings(base)).toThrow(/ssl.key.location: .* ssl.key.password is missing/);
    expect(() => settings({ ...base, 'ssl.key.password': 'wrong-Pw' })).toThrow(
      /Kafka property ssl.key.password: does not open the key/,
    );
    // The right password opens it; /k.pem is no certificate, which comes next.
    expect(() => settings({ ...base, 'ssl.key.password': 'key-Pw-0417abcd' })).toThrow(
      /ssl.certificate.location: is not a PEM certificate/,
    );
  });
});

describe('describeKafkaFailure', () => {
  const context = {
    brokers: ['b:9093'],
    security: {
      tls: { ca: 'x' },
      sasl: { mechanism: 'SCRAM-SHA-512' as const, username: 'u', password: 'sasl-Pw-secret-77' },
    },
    topics: ['p.depth'],
  };
  it.each([
    [
      { name: 'KafkaJSSASLAuthenticationError', message: 'SASL SCRAM SHA512 authentication failed' },
      'authentication failed for user u with SCRAM-SHA-512 at b:9093',
    ],
    [
      { name: 'KafkaJSNumberOfRetriesExceeded', cause: { code: 'SELF_SIGNED_CERT_IN_CHAIN', broker: 'c:1' } },
      'certificate of c:1 is not trusted by ssl.ca.location',
    ],
    [
      { errors: [{ message: 'Connection to c:2 failed.', cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } }] },
      'certificate of c:2 does not name that host',
    ],
    [
      { errors: [{ apiId: 'TOPIC_AUTHORIZATION_FAILED' }] },
      'user u may not write or create p.depth at b:9093',
    ],
    [{ type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' }, 'user u may not use transactional id'],
  ])('%j', (err, message) => {
    const text = describeKafkaFailure(err, context);
    expect(text).toContain(message);
    expect(text).not.toContain('sasl-Pw-secret-77');
  });

  it('says what a kafkajs "no coordinator" means for a transactional id', () => {
    const err = {
      name: 'KafkaJSNonRetriableError',
      originalError: { name: 'KafkaJSGroupCoordinatorNotFound', message: 'Failed to find group coordinator' },
    };
    expect(describeKafkaFailure(err, { ...context, transactionalId: 'tx-1' })).toContain(
      'named no transaction coordinator for transactional id tx-1: user u may not be allowed that transactional id',
    );
  });

  it('leaves other errors alone', () => {
    expect(describeKafkaFailure(new Error('boom'), context)).toBeUndefined();
  });
});
