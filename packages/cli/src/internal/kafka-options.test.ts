import { describe, expect, it } from 'vitest';
import { kafkaSecretsInArgs, parseKafkaPropertiesFile } from './kafka-options.js';

describe('--kafka-config files', () => {
  it('reads key=value and key: value, skips comments, fills ${NAME} and ${NAME:default} from the environment', () => {
    expect(
      parseKafkaPropertiesFile(
        '# cluster\n! also a comment\n\nbootstrap.servers = a:9093\nsasl.username: qf\nsasl.password=${PW}\nclient.id=${ID:qf-default}\n',
        'c.properties',
        { PW: 'from-env' },
      ),
    ).toEqual({
      'bootstrap.servers': 'a:9093',
      'sasl.username': 'qf',
      'sasl.password': 'from-env',
      'client.id': 'qf-default',
    });
  });

  it('names the line, the key and the variable that is not set (exit 2)', () => {
    expect(() => parseKafkaPropertiesFile('a=1\nsasl.password=${NOPE}\n', 'c.properties', {})).toThrow(
      'c.properties:2: sasl.password: environment variable NOPE is not set',
    );
  });
});

describe('kafkaSecretsInArgs', () => {
  it('finds passwords given with -X or --kafka-property, in either spelling', () => {
    expect(
      kafkaSecretsInArgs([
        '-X',
        'sasl.password=one',
        '-Xssl.key.password=two',
        '--kafka-property=sasl.password=three',
        '--kafka-property',
        'sasl.username=user',
      ]),
    ).toEqual(['one', 'two', 'three']);
  });
});
