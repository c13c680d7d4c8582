import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { bar, barUpdate, depth, level, suspension } from '../../../test-support/test-records.js';
import { kafkaMessageValue, kafkaTopicKindOf, type KafkaRecord } from '../to-kafka-message.js';
import { AVRO_SCHEMAS } from './avro-schemas.js';
import { checkRegistryUrl } from './schema-registry-serializer.js';

const RECORDS: KafkaRecord[] = [
  barUpdate('AAPL.US', Date.UTC(2026, 0, 5, 14, 30), false),
  { ...bar('700.HK', Date.UTC(2026, 0, 5)), volume: null, turnover: null },
  depth('BTCUSDT', 18_446_744_073_709_551_615n, Date.UTC(2026, 0, 5), [level(1.5, undefined)], []),
  depth('BTCUSDT', undefined, undefined, [], []),
  suspension('ABCD', { symbolName: 'A B C D', haltAtMs: Date.UTC(2026, 0, 5, 15) }),
];

describe('AVRO_SCHEMAS', () => {
  it.each(RECORDS.map((r) => [`${r.type} ${JSON.stringify(kafkaMessageValue(r)).slice(0, 60)}`, r]))(
    "has exactly the JSON value's fields and gives it back unchanged: %s",
    (_, record) => {
      const value = kafkaMessageValue(record as KafkaRecord);
      const schema = AVRO_SCHEMAS[kafkaTopicKindOf(record as KafkaRecord)];
      expect(schema.fields.map((f) => f.name)).toEqual(Object.keys(value));
      const type = avsc.Type.forSchema(schema as avsc.Schema);
      expect(type.fromBuffer(type.toBuffer(value))).toEqual(value);
    },
  );

  it('lets every nullable field be left out by a later reader (default null)', () => {
    for (const schema of Object.values(AVRO_SCHEMAS))
      for (const f of schema.fields)
        if (Array.isArray(f.type)) expect([f.name, f.type[0], f.default]).toEqual([f.name, 'null', null]);
  });
});

describe('checkRegistryUrl', () => {
  it('keeps an http(s) URL without a trailing slash', () => {
    expect(checkRegistryUrl('http://127.0.0.1:8080/apis/ccompat/v7/')).toBe(
      'http://127.0.0.1:8080/apis/ccompat/v7',
    );
    expect(checkRegistryUrl('https://sr.example:8081')).toBe('https://sr.example:8081');
  });

  it('refuses credentials in the URL without repeating them, and what is not http(s)', () => {
    expect(() => checkRegistryUrl('http://u:hunter2@127.0.0.1:8081')).toThrow(
      /credentials do not go in the URL/,
    );
    expect(() => checkRegistryUrl('http://u:hunter2@127.0.0.1:8081')).not.toThrow(/hunter2/);
    expect(() => checkRegistryUrl('ftp://127.0.0.1')).toThrow(/must be http or https/);
    expect(() => checkRegistryUrl('not a url')).toThrow(/not a URL/);
  });
});
