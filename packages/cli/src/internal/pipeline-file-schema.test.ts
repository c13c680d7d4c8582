import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { pipelineFileJsonSchema } from './pipeline-file.js';

const EXAMPLES = join(import.meta.dirname, '../../../../examples/pipelines');
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(pipelineFileJsonSchema() as object);

describe('run --schema', () => {
  it.each(readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')))(
    'accepts the shipped example %s as written (${ENV} values, comma-separated codes)',
    (name) => {
      const file = parse(readFileSync(join(EXAMPLES, name), 'utf8')) as unknown;
      expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    },
  );

  it('accepts ${ENV} where a number, an enum or a list stands, and rejects what the loader rejects', () => {
    const step = {
      source: { kline: { codes: '${CODES}', klineTypes: '${TYPES:1,8}', bars: '${BARS:100}' } },
    };
    expect(validate({ version: 1, pipelines: [{ ...step, sinks: { stdout: {} } }] })).toBe(true);
    expect(validate({ version: 1, pipelines: [{ ...step, sinks: { stdout: {} }, extra: 1 }] })).toBe(false);
    expect(
      validate({ version: 1, service: { plan: 'gold' }, pipelines: [{ ...step, sinks: { stdout: {} } }] }),
    ).toBe(false);
    expect(
      validate({ version: 1, service: { plan: '${PLAN}' }, pipelines: [{ ...step, sinks: { stdout: {} } }] }),
    ).toBe(true);
  });
});
