import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { parsePipelineFile } from './pipeline-file.js';

/** `quoteflow sync` in-process with `flags` (no request is made: every flag is checked first). */
async function sync(...flags: string[]) {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const argv = [
    'sync',
    '--codes',
    'BTCUSDT',
    '--kline-types',
    '1',
    '--bars',
    '1',
    '--out',
    '/nonexistent/qf',
  ];
  const code = await runCli([...argv, '--token', 't', ...flags], {
    stdout: new PassThrough(),
    stderr,
    env: { QUOTEFLOW_BASE_URL: 'http://127.0.0.1:9' },
    cwd: process.cwd(),
  });
  return { code, err };
}

describe('sync: the table upkeep flags', () => {
  it('refuses a retention that is no duration, naming the flag and the value (exit 2)', async () => {
    const r = await sync('--upkeep-retention', '7 days');
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '--upkeep-retention must be a duration such as 168h, 7d, 30m or 0s, got "7 days"',
    );
  });

  it('refuses rows per file below 1 and --no-upkeep beside a setting of it (exit 2)', async () => {
    const rows = await sync('--upkeep-rows-per-file', '0');
    expect(rows.code).toBe(2);
    expect(rows.err).toMatch(/--upkeep-rows-per-file.*expected an integer >= 1, got "0"/);
    const both = await sync('--no-upkeep', '--upkeep-retention', '1h');
    expect(both.code).toBe(2);
    expect(both.err).toContain('--upkeep-retention sets what --no-upkeep turns off: drop one of them');
  });

  it('refuses a log retention that is no duration, and beside --no-upkeep, naming the flag (exit 2)', async () => {
    const bad = await sync('--upkeep-log-retention', 'an hour');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      '--upkeep-log-retention must be a duration such as 168h, 7d, 30m or 0s, got "an hour"',
    );
    const both = await sync('--no-upkeep', '--upkeep-log-retention', '1h');
    expect(both.code).toBe(2);
    expect(both.err).toContain('--upkeep-log-retention sets what --no-upkeep turns off: drop one of them');
  });
});

const FILE = (files: string) => `version: 1
pipelines:
  - source:
      kline: { codes: [BTCUSDT], klineTypes: [1] }
    sinks:
      files: ${files}
`;

describe('pipeline files: sinks.files.upkeep', () => {
  it('takes false, true, or rowsPerFile and a retention as --upkeep-retention writes it', () => {
    const upkeepOf = (files: string) => {
      const sink = parsePipelineFile(FILE(files), 'p.yaml').pipelines[0]!.sinks?.files;
      return sink !== undefined && 'upkeep' in sink ? sink.upkeep : undefined;
    };
    expect(upkeepOf('{ out: ./d, upkeep: false }')).toBe(false);
    expect(upkeepOf('{ out: ./d, upkeep: true }')).toBe(true);
    expect(upkeepOf('{ out: ./d, upkeep: { rowsPerFile: 1000, retention: 36h } }')).toEqual({
      rowsPerFile: 1000,
      retention: 36 * 3_600_000,
    });
    expect(upkeepOf('{ out: ./d, upkeep: { logRetention: 30m } }')).toEqual({ logRetention: 30 * 60_000 });
  });

  it('names the line and the field of a bad retention, rows per file or key', () => {
    expect(() => parsePipelineFile(FILE('{ out: ./d, upkeep: { retention: 7days } }'), 'p.yaml')).toThrow(
      /p\.yaml:6: pipelines\[0\]\.sinks\.files\.upkeep\.retention: a duration such as 168h, 7d, 30m or 0s/,
    );
    expect(() => parsePipelineFile(FILE('{ out: ./d, upkeep: { rowsPerFile: 0 } }'), 'p.yaml')).toThrow(
      /p\.yaml:6: pipelines\[0\]\.sinks\.files\.upkeep\.rowsPerFile/,
    );
    expect(() => parsePipelineFile(FILE('{ out: ./d, upkeep: { every: 3 } }'), 'p.yaml')).toThrow(
      /p\.yaml:6: pipelines\[0\]\.sinks\.files\.upkeep\.every: Unrecognized key/,
    );
  });

  it('is for every pipeline: a depth and a suspensions pipeline take it as a kline one', () => {
    const sinkOf = (source: string) =>
      parsePipelineFile(
        `version: 1
pipelines:
  - source:
      ${source}
    sinks:
      files: { out: ./d, upkeep: { rowsPerFile: 500, retention: 1h } }
`,
        'p.yaml',
      ).pipelines[0]!.sinks?.files;
    for (const source of ['depth: { codes: [BTCUSDT] }', 'suspensions: { exchanges: [nyse] }'])
      expect(sinkOf(source)).toMatchObject({ upkeep: { rowsPerFile: 500, retention: 3_600_000 } });
  });
});
