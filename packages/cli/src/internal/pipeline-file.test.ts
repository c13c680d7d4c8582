import { describe, expect, it } from 'vitest';
import { parsePipelineFile } from './pipeline-file.js';

const GOOD = `version: 1
service:
  plan: professional
duration: 30
pipelines:
  - name: bars
    source:
      kline:
        codes: [AAPL.US, BTCUSDT]
        klineTypes: [1, 8]
        bars: 50
    sinks:
      files: { out: ./data }
    state: ./state.json
  - source:
      suspensions:
        exchanges: [nyse]
`;

describe('parsePipelineFile', () => {
  it('accepts a valid file and fills defaults', () => {
    const file = parsePipelineFile(GOOD, 'p.yaml');
    expect(file.pipelines).toHaveLength(2);
    const first = file.pipelines[0]!;
    expect('kline' in first.source && first.source.kline.klineTypes).toEqual([1, 8]);
    expect(first.sinks?.files?.format).toBe('parquet');
  });

  it('names the line and the field of a bad kline type', () => {
    const bad = GOOD.replace('klineTypes: [1, 8]', 'klineTypes: [1, 12]');
    expect(() => parsePipelineFile(bad, 'p.yaml')).toThrow(
      /p\.yaml:10: pipelines\[0\]\.source\.kline\.klineTypes\[1\]/,
    );
  });

  it('names an unknown field and its line', () => {
    const bad = GOOD.replace('    state: ./state.json', '    stat: ./state.json');
    expect(() => parsePipelineFile(bad, 'p.yaml')).toThrow(
      /p\.yaml:14: pipelines\[0\]\.stat: Unrecognized key/,
    );
  });

  it('says which source kinds exist when a pipeline names none', () => {
    const bad = GOOD.replace('      suspensions:\n        exchanges: [nyse]', '      trades: {}');
    expect(() => parsePipelineFile(bad, 'p.yaml')).toThrow(
      /p\.yaml:16: pipelines\[1\]\.source: needs exactly one of kline, depth, suspensions/,
    );
  });

  it('reports YAML syntax errors with line and column', () => {
    expect(() => parsePipelineFile('version: 1\npipelines: [\n', 'p.yaml')).toThrow(
      /p\.yaml:\d+:\d+: invalid YAML/,
    );
  });

  it('refuses a token in the file: only the name of its environment variable may appear', () => {
    const bad = GOOD.replace('  plan: professional', '  plan: professional\n  token: abc');
    expect(() => parsePipelineFile(bad, 'p.yaml')).toThrow(/p\.yaml:4: service\.token: Unrecognized key/);
  });
});

describe('parsePipelineFile: ${ENV} references', () => {
  const withEnv = (duration: string, codes: string) => `version: 1
duration: ${duration}
pipelines:
  - source:
      kline:
        codes: ${codes}
        klineTypes: [1]
    sinks:
      files: { out: "\${OUT:./data}/x" }
`;

  it('fills values from the environment, typed as their text reads when a plain value is one reference', () => {
    const file = parsePipelineFile(withEnv('${SECONDS}', '${CODES}'), 'p.yaml', {
      SECONDS: '45',
      CODES: '[BTCUSDT, ETHUSDT]',
      OUT: '/tmp/q',
    });
    expect(file.duration).toBe(45);
    const step = file.pipelines[0]!;
    expect('kline' in step.source && step.source.kline.codes).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(step.sinks?.files?.out).toBe('/tmp/q/x');
  });

  it('takes a comma-separated code list, as --codes does, and the default when a variable is unset', () => {
    const file = parsePipelineFile(withEnv('10', '${CODES}'), 'p.yaml', { CODES: 'BTCUSDT, AAPL.US' });
    const step = file.pipelines[0]!;
    expect('kline' in step.source && step.source.kline.codes).toEqual(['BTCUSDT', 'AAPL.US']);
    expect(step.sinks?.files?.out).toBe('./data/x');
  });

  it('names the line, the field and the variable that is not set, and keeps $${ literal', () => {
    expect(() => parsePipelineFile(withEnv('${SECONDS}', '[A]'), 'p.yaml', {})).toThrow(
      /^p\.yaml:2: duration: environment variable SECONDS is not set/,
    );
    const literal = parsePipelineFile(
      withEnv('5', '[A]').replace('${OUT:./data}', () => '$${OUT}'),
      'p.yaml',
      {},
    );
    expect(literal.pipelines[0]!.sinks?.files?.out).toBe('${OUT}/x');
  });

  it('never lets a value inject YAML: a filled quoted value stays one string', () => {
    const file = parsePipelineFile(withEnv('5', '[A]'), 'p.yaml', { OUT: 'a }\nb: {' });
    expect(file.pipelines[0]!.sinks?.files?.out).toBe('a }\nb: {/x');
  });
});

describe('parsePipelineFile: operators and stdout', () => {
  const withOps = (types: string, ops: string) => `version: 1
pipelines:
  - source:
      kline: { codes: [BTCUSDT, AAPL.US], klineTypes: ${types} }
    sinks:
      stdout: { finalOnly: true }
    operators:
${ops}`;

  it('accepts resample and yesterdayClose, each with its own stdout sink', () => {
    const file = parsePipelineFile(
      withOps(
        '[1, 8]',
        '      - resample: { to: 3 }\n        sinks: { stdout: {} }\n      - yesterdayClose: {}\n        sinks: { stdout: {} }\n',
      ),
      'p.yaml',
    );
    const step = file.pipelines[0]!;
    expect(step.sinks?.stdout).toEqual({ finalOnly: true });
    expect('operators' in step && step.operators).toEqual([
      { resample: { to: 3, emit: 'final' }, sinks: { stdout: { finalOnly: false } } },
      { yesterdayClose: {}, sinks: { stdout: {} } },
    ]);
  });

  it('refuses a resample target the source bars do not nest in, at its line', () => {
    expect(() =>
      parsePipelineFile(
        withOps('[3]', '      - resample: { to: { minutes: 20 } }\n        sinks: { stdout: {} }\n'),
        'p.yaml',
      ),
    ).toThrow(
      /^p\.yaml:8: pipelines\[0\]\.operators\[0\]\.resample\.to: a 20-minute period is not a multiple/,
    );
  });

  it('refuses yesterdayClose without daily bars, and an unknown operator', () => {
    expect(() =>
      parsePipelineFile(
        withOps('[1]', '      - yesterdayClose: {}\n        sinks: { stdout: {} }\n'),
        'p.yaml',
      ),
    ).toThrow(/p\.yaml:8: pipelines\[0\]\.operators\[0\]\.yesterdayClose: needs daily bars/);
    expect(() =>
      parsePipelineFile(withOps('[1]', '      - dedupe: {}\n        sinks: { stdout: {} }\n'), 'p.yaml'),
    ).toThrow(/p\.yaml:8: pipelines\[0\]\.operators\[0\]: needs exactly one of resample, yesterdayClose/);
  });

  it('refuses kline types a stock does not have, naming the field (as --kline-types does)', () => {
    expect(() =>
      parsePipelineFile(withOps('[1, 6]', '      []\n').replace('operators:\n      []\n', ''), 'p.yaml'),
    ).toThrow(
      /p\.yaml:4: pipelines\[0\]\.source\.kline\.klineTypes\[1\]: stock and index codes have no 2-hour bars \(AAPL\.US\)/,
    );
  });
});

describe('parsePipelineFile: the depth dedupe operator', () => {
  const depth = (op: string) => `version: 1
pipelines:
  - source: { depth: { codes: [BTCUSDT] } }
    operators:
      - dedupe: ${op}
    sinks: { stdout: {} }
`;

  it("takes dedupeBySeq's options", () => {
    const step = parsePipelineFile(depth('{ withoutSeq: drop, maxCodes: 1000 }'), 'p.yaml').pipelines[0]!;
    expect('operators' in step && step.operators).toEqual([
      { dedupe: { withoutSeq: 'drop', maxCodes: 1000 } },
    ]);
  });

  it('names the line of an unknown policy', () => {
    expect(() => parsePipelineFile(depth('{ withoutSeq: never }'), 'p.yaml')).toThrow(
      /^p\.yaml:5: pipelines\[0\]\.operators\[0\]\.dedupe\.withoutSeq: /,
    );
  });
});
