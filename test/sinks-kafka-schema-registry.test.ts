/**
 * Avro values through a real schema registry (Apicurio Registry 3, its Confluent-compatible API,
 * basic auth) to a real Kafka broker, read back by a consumer we did not write: Confluent's Python
 * client with its AvroDeserializer. The same records produced as JSON (the default) decode to
 * exactly the same fields and values. Also: a read-only principal looks schemas up instead of
 * registering them; a schema evolves under BACKWARD; the registry's refusals are loud.
 */
import type { BarUpdate } from '@quoteflow/core';
import {
  AVRO_SCHEMAS,
  KafkaKlineSink,
  KafkaSink,
  SchemaRegistryError,
  SchemaRegistrySerializer,
  type AvroRecordSchema,
  type SchemaRegistrySerializerOptions,
  type KafkaRecord,
} from '@quoteflow/sinks';
import { beforeAll, describe, expect, it } from 'vitest';
import { bar, barUpdate, depth, level, suspension } from '../packages/sinks/test-support/test-records.js';
import { kafkaBrokers, uniquePrefix } from './support/kafka.js';
import {
  readWithConfluentPython,
  testSchemaRegistry,
  type ConfluentPythonRecord,
  type SchemaRegistryUser,
  type TestSchemaRegistry,
} from './support/schema-registry.js';

const T0 = Date.UTC(2026, 10, 20, 14, 30);

/** A bar update with a whole close (JSON writes 18, Avro a double: both read back as 18) and null volumes every third. */
function update(code: string, i: number, final: boolean): BarUpdate {
  const nulls = i % 3 === 0 ? { volume: null, turnover: null } : { turnover: 123_456.789 + i };
  return { ...barUpdate(code, T0 + i * 60_000, final), close: 18, open: 100 + i / 8, ...nulls };
}

/** Every kind, with the edge cases of the contract's JSON: nulls, empty book sides, a 64-bit seq. */
function records(): KafkaRecord[] {
  return [
    update('AAPL.US', 0, false),
    update('AAPL.US', 1, true),
    bar('AAPL.US', Date.UTC(2026, 0, 2), { klineType: 8 }),
    // 2^64 - 1: exact only as a string
    depth('700.HK', 18_446_744_073_709_551_615n, T0 + 1234, [level(300.2, 5)], [level(300.4, undefined)]),
    depth('700.HK', undefined, undefined, [], []),
    depth('BTCUSDT', 9_007_199_254_740_993n, T0, [], [level(1, 2)]),
    suspension('600000', {
      exchange: 'sse',
      symbolName: '浦发银行',
      haltReason: 'major event',
      haltDate: '2026-11-20',
      haltAtMs: Date.UTC(2026, 10, 20, 1, 30),
    }),
    update('TSLA.US', 2, true),
  ];
}

const countOf = (rs: KafkaRecord[], kind: string): number =>
  rs.filter((r) => (kind === 'kline' ? r.type === 'bar' || r.type === 'bar-update' : r.type === kind)).length;

/** What a reader sees of a topic: key and value, in offset order (one partition per key keeps it). */
const decoded = (rs: readonly ConfluentPythonRecord[]): unknown[] =>
  rs
    .map((r) => ({ key: r.key, value: r.value }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

let brokers: string;
let registry: TestSchemaRegistry;

beforeAll(async () => {
  [brokers, registry] = await Promise.all([kafkaBrokers(), testSchemaRegistry()]);
});

/** Opens a serializer on the run's registry as `user` (the writer unless said). */
function openAs(
  topicPrefix: string,
  more: Partial<SchemaRegistrySerializerOptions> = {},
  user: SchemaRegistryUser = registry.writer,
): Promise<SchemaRegistrySerializer> {
  // A minute, not the 20 s default: the test machine's two cores may be very busy.
  return SchemaRegistrySerializer.open({
    url: registry.url,
    ...user,
    topicPrefix,
    timeoutMs: 60_000,
    ...more,
  });
}

describe('Avro values with a schema registry', () => {
  it("decode, with Confluent's Python AvroDeserializer, to exactly the JSON values of the same records", async () => {
    const avroPrefix = uniquePrefix('sr-avro');
    const jsonPrefix = uniquePrefix('sr-json');
    const avro = await openAs(avroPrefix);
    const subjects = avro.subjects();
    expect([...subjects.values()].map((s) => s.subject).sort()).toEqual([
      `${avroPrefix}.depth-value`,
      `${avroPrefix}.kline-value`,
      `${avroPrefix}.suspension-value`,
    ]);
    const input = records();
    for (const [prefix, valueSerializer] of [
      [avroPrefix, avro],
      [jsonPrefix, undefined],
    ] as const) {
      const sink = new KafkaSink({
        brokers,
        topicPrefix: prefix,
        ...(valueSerializer ? { valueSerializer } : {}),
      });
      await Promise.all(input.map((r) => sink.write(r)));
      await sink.close();
    }
    const kinds = ['kline', 'depth', 'suspension'] as const;
    const [fromAvro, fromJson] = await Promise.all([
      readWithConfluentPython(
        brokers,
        kinds.map((k) => `${avroPrefix}.${k}`),
        input.length,
        { url: registry.url, user: registry.reader },
      ),
      readWithConfluentPython(
        brokers,
        kinds.map((k) => `${jsonPrefix}.${k}`),
        input.length,
      ),
    ]);
    for (const kind of kinds) {
      const avroOf = fromAvro.filter((r) => r.topic === `${avroPrefix}.${kind}`);
      const jsonOf = fromJson.filter((r) => r.topic === `${jsonPrefix}.${kind}`);
      expect(avroOf).toHaveLength(countOf(input, kind));
      expect(avroOf.map((r) => r.schema_id)).toEqual(
        Array(avroOf.length).fill(subjects.get(`${avroPrefix}.${kind}`)!.id),
      );
      expect(decoded(avroOf)).toEqual(decoded(jsonOf));
      // The schema's fields are exactly the contract's JSON fields (no more, no fewer).
      const fields = AVRO_SCHEMAS[kind].fields.map((f) => f.name).sort();
      expect(Object.keys(avroOf[0]!.value).sort()).toEqual(fields);
      expect(Object.keys(jsonOf[0]!.value).sort()).toEqual(fields);
    }
    // In offset order (one key per partition): 2^64 - 1 exact, a missing seq and tick time null.
    const book = fromAvro.filter((r) => r.key === '700.HK');
    expect(book.map((r) => r.value['seq'])).toEqual(['18446744073709551615', null]);
    expect(book[1]!.value).toMatchObject({ bids: [], asks: [], tick_time: null });
  });

  it("exactly once: the K-line sink's transactions carry Avro values a read_committed consumer decodes", async () => {
    const prefix = uniquePrefix('sr-eos');
    const valueSerializer = await openAs(prefix, { kinds: ['kline'] });
    const sink = await KafkaKlineSink.open({
      brokers,
      topicPrefix: prefix,
      transactionalId: `${prefix}-tx`,
      valueSerializer,
    });
    const updates = [update('AAPL.US', 0, true), update('AAPL.US', 1, false), update('TSLA.US', 0, true)];
    for (const u of updates) sink.write(u);
    await sink.checkpoint();
    await sink.close();
    const read = await readWithConfluentPython(brokers, `${prefix}.kline`, 3, {
      url: registry.url,
      user: registry.reader,
    });
    expect(read.map((r) => [r.key, r.value['final'], r.value['ts']]).sort()).toEqual([
      ['AAPL.US', false, new Date(T0 + 60_000).toISOString()],
      ['AAPL.US', true, new Date(T0).toISOString()],
      ['TSLA.US', true, new Date(T0).toISOString()],
    ]);
  });

  it('a read-only principal looks the registered schemas up (registering is refused with 403)', async () => {
    const prefix = uniquePrefix('sr-ro');
    const asWriter = await openAs(prefix, { kinds: ['depth'] });
    const asReader = await openAs(prefix, { kinds: ['depth'] }, registry.reader);
    expect(asReader.subjects()).toEqual(asWriter.subjects());
    // Nothing registered under a fresh subject: the reader cannot get an id, and says why.
    const fresh = uniquePrefix('sr-ro-fresh');
    const err = await openAs(fresh, { kinds: ['depth'] }, registry.reader).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaRegistryError);
    expect((err as Error).message).toContain(
      `schema registry ${registry.url}: subject ${fresh}.depth-value:`,
    );
    expect((err as Error).message).toContain('403');
    expect((err as Error).message).not.toContain(registry.reader.password);
  });

  it('evolves under BACKWARD: v2 adds a field with a default, an incompatible v3 is refused (409)', async () => {
    const prefix = uniquePrefix('sr-evolve');
    const open = (schema: AvroRecordSchema): Promise<SchemaRegistrySerializer> =>
      openAs(prefix, { kinds: ['kline'], schemas: { kline: schema } });
    const v1 = AVRO_SCHEMAS.kline;
    const v2: AvroRecordSchema = {
      ...v1,
      fields: [...v1.fields, { name: 'venue', type: ['null', 'string'], default: null }],
    };
    const id1 = (await open(v1)).subjects().get(`${prefix}.kline`)!.id;
    const id2 = (await open(v2)).subjects().get(`${prefix}.kline`)!.id;
    expect(id2).not.toBe(id1);
    const config = await fetch(`${registry.url}/config/${prefix}.kline-value`, {
      headers: { authorization: basic(registry.writer) },
    });
    expect(await config.json()).toEqual({ compatibilityLevel: 'BACKWARD' });
    // A new field without a default: a v3 reader could not read v2's records.
    const v3: AvroRecordSchema = { ...v2, fields: [...v2.fields, { name: 'exchange', type: 'string' }] };
    const err = await open(v3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaRegistryError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^schema registry ${escape(registry.url)}: subject ${escape(prefix)}\\.kline-value: schema refused as incompatible .*\\(409\\)`,
      ),
    );
    const versions = await fetch(`${registry.url}/subjects/${prefix}.kline-value/versions`, {
      headers: { authorization: basic(registry.writer) },
    });
    expect(await versions.json()).toEqual([1, 2]);
  });

  it('fails loudly: wrong password (401), no credentials, unreachable registry, credentials in the URL', async () => {
    const prefix = uniquePrefix('sr-fail');
    const wrong = 'not-the-password-7f3a';
    const e401 = await SchemaRegistrySerializer.open({
      url: registry.url,
      username: 'writer',
      password: wrong,
      topicPrefix: prefix,
    }).catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(SchemaRegistryError);
    expect((e401 as SchemaRegistryError).status).toBe(401);
    expect((e401 as Error).message).toContain(
      `schema registry ${registry.url}: subject ${prefix}.kline-value: authentication refused (401)`,
    );
    expect(JSON.stringify(e401, Object.getOwnPropertyNames(e401))).not.toContain(wrong);
    const anonymous = await SchemaRegistrySerializer.open({ url: registry.url, topicPrefix: prefix }).catch(
      (e: unknown) => e,
    );
    expect((anonymous as SchemaRegistryError).status).toBe(401);
    const closed = 'http://127.0.0.1:9/apis/ccompat/v7';
    const down = await SchemaRegistrySerializer.open({
      url: closed,
      ...registry.writer,
      topicPrefix: prefix,
    }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(SchemaRegistryError);
    expect((down as Error).message).toContain(
      `schema registry ${closed}: subject ${prefix}.kline-value: unreachable`,
    );
    const inUrl = await SchemaRegistrySerializer.open({
      url: registry.url.replace('http://', `http://writer:${wrong}@`),
      topicPrefix: prefix,
    }).catch((e: unknown) => e);
    expect((inUrl as Error).message).toMatch(/credentials do not go in the URL/);
    expect((inUrl as Error).message).not.toContain(wrong);
  });
});

function basic(u: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
