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
