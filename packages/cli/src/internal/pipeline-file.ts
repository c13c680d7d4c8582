import { readFile } from 'node:fs/promises';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { EXCHANGES, PLANS, type KlineType } from '@quoteflow/core';
import { WITHOUT_SEQ_POLICIES, type ResampleTarget } from '@quoteflow/operators';
import { resampleProblem } from '@quoteflow/operators/internal';
import { klineTypeProblem } from './check-kline-types.js';
import { DURATION_PATTERN, parseDuration } from './duration.js';
import { parseLimitOverrides } from './limit-overrides.js';
import { fillEnvReferences } from './pipeline-env.js';
import { UsageError } from './usage-error.js';

// A list, or one comma-separated string (`codes: ${CODES}` from the environment, like `--codes`).
const codes = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((c) => c.trim())
          .filter((c) => c !== '')
      : v,
  z.array(z.string().regex(/^\S+$/, 'a product code without spaces')).min(1),
);
const klineType = z
  .number()
  .int()
  .min(1, 'a kline type from 1 to 10')
  .max(10, 'a kline type from 1 to 10')
  .transform((k) => k as KlineType);

const FilesSinkSchema = z.strictObject({
  out: z.string().min(1),
  format: z.enum(['parquet', 'arrow', 'ndjson']).default('parquet'),
  /**
   * When another live writer owns some of this pipeline's series in the table: wait until it
   * stops or its lease runs out (`--wait-for-writer`), instead of failing (exit 1) before any request.
   */
  waitForWriter: z.boolean().default(false),
  /**
   * A pipeline's files keep their table healthy while it runs (as `sync`, `depth`,
   * `suspensions --watch`): `upkeep: false` turns it off, or `{ rowsPerFile, retention,
   * logRetention }` tunes it (`--upkeep-rows-per-file`, `--upkeep-retention`,
   * `--upkeep-log-retention`).
   */
  upkeep: z
    .union([
      z.boolean(),
      z.strictObject({
        rowsPerFile: z.number().int().min(1).optional(),
        retention: z
          .string()
          .regex(DURATION_PATTERN, 'a duration such as 168h, 7d, 30m or 0s')
          .transform((d) => parseDuration(d)!)
          .optional(),
        logRetention: z
          .string()
          .regex(DURATION_PATTERN, 'a duration such as 1h, 7d, 30m or 0s')
          .transform((d) => parseDuration(d)!)
          .optional(),
      }),
    ])
    .optional(),
});
const stringish = z.union([z.string(), z.number(), z.boolean()]);
const KafkaSinkSchema = z.strictObject({
  /** bootstrap.servers; may come from `properties` or `configFile` instead. */
  brokers: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  topicPrefix: z.string().min(1).default('quoteflow'),
  clientId: z.string().min(1).optional(),
  compression: z.enum(['none', 'gzip', 'snappy', 'lz4', 'zstd']).optional(),
  /** A Kafka client properties file, as `--kafka-config` (`${NAME}` from the environment). */
  configFile: z.string().min(1).optional(),
  /** Kafka client properties by their librdkafka/Java names, as `-X` (over `configFile`). */
  properties: z.record(z.string(), stringish).optional(),
  /** TLS to the brokers: `true` (the system's CAs), or the files of a private CA and a client certificate. */
  tls: z
    .union([
      z.boolean(),
      z.strictObject({
        caFile: z.string().min(1).optional(),
        certFile: z.string().min(1).optional(),
        keyFile: z.string().min(1).optional(),
        /** Write `${NAME}`: taken from the environment. */
        keyPassword: z.string().min(1).optional(),
        checkHostname: z.boolean().optional(),
      }),
    ])
    .optional(),
  /** SASL login; write the password as `${NAME}` (taken from the environment), never in the file. */
  sasl: z
    .strictObject({
      mechanism: z.string().min(1),
      username: z.string().min(1),
      password: z.string().min(1),
    })
    .optional(),
  /** Create a missing topic (default), or fail naming it (topics are provisioned). */
  createTopics: z.boolean().optional(),
  /** How topics created here are made. */
  topics: z
    .strictObject({
      partitions: z.number().int().min(1).optional(),
      replicationFactor: z.number().int().min(1).optional(),
      configs: z.record(z.string(), stringish).optional(),
    })
    .optional(),
  /** K-lines: exactly-once (Kafka transactions; the default where the brokers run them) or at-least-once. */
  delivery: z.enum(['exactly-once', 'at-least-once']).optional(),
  /** K-lines: the stem of the sink's transactional id (default: quoteflow.PREFIX.<hash of the universe>). */
  transactionalId: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, '1 to 200 printable ASCII characters without spaces')
    .optional(),
  /**
   * A schema registry's URL (Confluent's REST API): values in Avro, subjects `<topic>-value`; basic
   * auth from QUOTEFLOW_SCHEMA_REGISTRY_USER / _PASSWORD (`--schema-registry` of the commands).
   */
  schemaRegistry: z.string().min(1).optional(),
});
/** NDJSON on stdout, one record per line in the Kafka value shape (pipe it into `jq`, like kcat). */
const StdoutSinkSchema = z.strictObject({});
/** Kline records on stdout: every update (`final: false|true`), or with `finalOnly` the closed bars. */
const KlineStdoutSinkSchema = z.strictObject({ finalOnly: z.boolean().default(false) });
const sinksSchema = <S extends z.ZodType, F extends z.ZodType>(stdout: S, files: F) =>
  z
    .strictObject({
      files: files.optional(),
      kafka: KafkaSinkSchema.optional(),
      stdout: stdout.optional(),
    })
    .refine(
      (s) => s.files !== undefined || s.kafka !== undefined || s.stdout !== undefined,
      'at least one of files, kafka or stdout',
    );
const SinksSchema = sinksSchema(StdoutSinkSchema, FilesSinkSchema);

/** Derived streams of a kline pipeline's bars: no request of their own, each into its own sinks. */
const OPERATOR_SCHEMAS = {
  resample: z.strictObject({
    resample: z.strictObject({
      to: z.union([klineType, z.strictObject({ minutes: z.number().int().min(1).max(1440) })]),
      emit: z.enum(['all', 'final']).default('final'),
    }),
    sinks: z.strictObject({ stdout: KlineStdoutSinkSchema }),
  }),
  yesterdayClose: z.strictObject({
    yesterdayClose: z.strictObject({}),
    sinks: z.strictObject({ stdout: StdoutSinkSchema }),
  }),
} as const;

/** One operator of a kline pipeline (`operators:`), chosen by its key. */
export type PipelineOperator = {
  [K in keyof typeof OPERATOR_SCHEMAS]: z.infer<(typeof OPERATOR_SCHEMAS)[K]>;
}[keyof typeof OPERATOR_SCHEMAS];

const KlineStepSchema = z.strictObject({
  name: z.string().min(1).optional(),
  source: z.strictObject({
    kline: z.strictObject({
      codes,
      klineTypes: z.array(klineType).min(1),
      bars: z.number().int().min(0).default(100),
    }),
  }),
  sinks: sinksSchema(KlineStdoutSinkSchema, FilesSinkSchema),
  operators: z.array(z.unknown()).optional(),
  state: z.string().min(1).optional(),
});
const DepthStepSchema = z.strictObject({
  name: z.string().min(1).optional(),
  source: z.strictObject({
    depth: z.strictObject({ codes, intervalMs: z.number().int().min(1).optional() }),
  }),
  // Depth always drops repeated seq (contract); this operator sets how (dedupeBySeq's options).
  operators: z
    .array(
      z.strictObject({
        dedupe: z.strictObject({
          withoutSeq: z.enum(WITHOUT_SEQ_POLICIES).optional(),
          maxCodes: z.number().int().min(1).optional(),
        }),
      }),
    )
    .max(1, 'one dedupe operator at most')
    .optional(),
  sinks: SinksSchema,
});
const SuspensionStepSchema = z.strictObject({
  name: z.string().min(1).optional(),
  source: z.strictObject({
    suspensions: z.strictObject({ exchanges: z.array(z.enum(EXCHANGES)).min(1) }),
  }),
  sinks: SinksSchema.optional(),
});

/** A pipeline file (`quoteflow run PIPELINE.yaml`): service, optional duration, and pipelines. */
export const PipelineFileSchema = z.strictObject({
  version: z.literal(1),
  service: z
    .strictObject({
      baseUrl: z.string().url().optional(),
      plan: z.enum(PLANS).optional(),
      /** Tighter limits than the plan's, as `--limit` takes them (`per-minute: 30`, `kline-rate: 1/2s`). */
      limits: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
      /** The name of the environment variable holding the token (never the token itself). */
      tokenEnv: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]*$/)
        .optional(),
    })
    .default({}),
  duration: z.number().positive().optional(),
  metricsPort: z.number().int().min(0).max(65_535).optional(),
  /** Several workers on one token (like `sync --redis`): each runs its share of every pipeline. */
  redis: z
    .strictObject({
      url: z
        .string()
        .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
        .optional(),
      /** The name of the environment variable holding the URL (it may carry a password). */
      urlEnv: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]*$/)
        .optional(),
      heartbeatMs: z.number().int().min(10).optional(),
    })
    .refine((r) => (r.url === undefined) !== (r.urlEnv === undefined), 'exactly one of url or urlEnv')
    .optional(),
  pipelines: z.array(z.unknown()).min(1),
});

/**
 * The JSON Schema of a pipeline file (`quoteflow run --schema`), for editors and CI linters: the
 * same zod schemas the file is checked with, each pipeline as one of its kinds.
 */
export function pipelineFileJsonSchema(): unknown {
  const operator = z.union(Object.values(OPERATOR_SCHEMAS));
  const step = z.union([
    KlineStepSchema.extend({ operators: z.array(operator).optional() }),
    DepthStepSchema,
    SuspensionStepSchema,
  ]);
  const schema = z.toJSONSchema(PipelineFileSchema.extend({ pipelines: z.array(step).min(1) }), {
    io: 'input',
    unrepresentable: 'any',
  });
  return acceptRawValues(schema, undefined);
}

/** A value that names environment variables, filled in after parsing: `${NAME}`, `${NAME:default}`. */
const ENV_REFERENCE = { type: 'string', pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:[^}]*)?\\}' } as const;

/**
 * The schema of the file as written, not as validated: a number, boolean, enum or list may be a
 * `${NAME}` reference (filled per value after parsing), and `codes` one comma-separated string, as
 * `--codes` takes them; an editor that checks a file against `run --schema` must accept them.
 */
function acceptRawValues(node: unknown, key: string | undefined): unknown {
  if (Array.isArray(node)) return node.map((n) => acceptRawValues(n, undefined));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node))
    out[k] =
      k === 'properties' && typeof v === 'object' && v !== null
        ? Object.fromEntries(Object.entries(v).map(([name, p]) => [name, acceptRawValues(p, name)]))
        : acceptRawValues(v, undefined);
  const type = out['type'];
  const typed = (t: string) => type === t || (Array.isArray(type) && type.includes(t));
  const scalarOrList =
    out['enum'] !== undefined ||
    out['const'] !== undefined ||
    ['number', 'integer', 'boolean', 'array'].some(typed);
  if (!scalarOrList || key === 'version') return out;
  const forms: unknown[] = [out, ENV_REFERENCE];
  if (key === 'codes') forms.push({ type: 'string', pattern: '^\\s*\\S+(\\s*,\\s*\\S+)*\\s*,?\\s*$' });
  return { anyOf: forms };
}

/** A kline pipeline of a file, its operators validated. */
export type KlinePipelineStep = Omit<z.infer<typeof KlineStepSchema>, 'operators'> & {
  readonly operators: readonly PipelineOperator[];
};

/** One pipeline of a file: its kind is decided by the key under `source`. */
export type PipelineStep =
  KlinePipelineStep | z.infer<typeof DepthStepSchema> | z.infer<typeof SuspensionStepSchema>;

/** A validated pipeline file. */
export type PipelineFile = Omit<z.infer<typeof PipelineFileSchema>, 'pipelines'> & {
  readonly pipelines: readonly PipelineStep[];
};
const STEP_SCHEMAS = {
  kline: KlineStepSchema,
  depth: DepthStepSchema,
  suspensions: SuspensionStepSchema,
} as const;

type Issue = { path: (string | number)[]; message: string };

/**
 * Parses and validates pipeline YAML; every problem becomes a {@link UsageError} that names the
 * file, line and field (`pipeline.yaml:7: pipelines[0].source.kline.klineTypes[1]: ...`).
 * `${NAME}` and `${NAME:default}` in values are filled from `env` first.
 */
export function parsePipelineFile(
  text: string,
  fileName: string,
  env: Readonly<Record<string, string | undefined>> = {},
): PipelineFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    throw new UsageError(`${fileName}:${line}:${col}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  const issues: Issue[] = fillEnvReferences(doc, env, (offset) => lineCounter.linePos(offset).line);
  const collect = (prefix: (string | number)[], error: z.ZodError): void => {
    for (const issue of error.issues) {
      const path = [...prefix, ...(issue.path as (string | number)[])];
      // An unknown key is reported at the key itself.
      if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
      issues.push({ path, message: issue.message });
    }
  };
  const top = issues.length > 0 ? undefined : PipelineFileSchema.safeParse(doc.toJS());
  if (top?.success === false) collect([], top.error);
  if (top?.success === true) {
    for (const [key, value] of Object.entries(top.data.service.limits ?? {})) {
      try {
        parseLimitOverrides([`${key}=${value}`], `service.limits.${key}:`);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        issues.push({
          path: ['service', 'limits', key],
          message: err.message.replace(/^service\.limits\.\S+ /, ''),
        });
      }
    }
    const steps = top.data.pipelines.flatMap((raw, i) => {
      const step = parseKeyed(raw, ['pipelines', i], 'source', STEP_SCHEMAS, issues, collect);
      if (step === undefined || !('kline' in step.source))
        return step === undefined ? [] : [step as PipelineStep];
      const kline = step as z.infer<typeof KlineStepSchema>;
      const operators = (kline.operators ?? []).flatMap((op, j) => {
        const parsed = parseKeyed(
          op,
          ['pipelines', i, 'operators', j],
          undefined,
          OPERATOR_SCHEMAS,
          issues,
          collect,
        );
        return parsed === undefined ? [] : [parsed as PipelineOperator];
      });
      const checked: KlinePipelineStep = { ...kline, operators };
      checkKlineStep(checked, i, issues);
      return [checked];
    });
    if (issues.length === 0) return { ...top.data, pipelines: steps };
  }
  const messages = issues.slice(0, 5).map((issue) => {
    // Point at the deepest node of the path that exists in the document.
    let path = issue.path;
    let node: unknown;
    while (path.length > 0 && !isNode((node = doc.getIn(path, true)))) path = path.slice(0, -1);
    const range = isNode(node) ? node.range : undefined;
    const line = range === undefined || range === null ? 1 : lineCounter.linePos(range[0]).line;
    return `${fileName}:${line}: ${formatPath(issue.path)}: ${issue.message}`;
  });
  throw new UsageError(messages.join('\n'));
}

/**
 * Validates `raw` by the one schema whose key it holds (under `under`, or at its top): a pipeline
 * by its source kind, an operator by its name. Problems go to `issues`.
 */
function parseKeyed<S extends Record<string, z.ZodType>>(
  raw: unknown,
  path: (string | number)[],
  under: string | undefined,
  schemas: S,
  issues: Issue[],
  collect: (prefix: (string | number)[], error: z.ZodError) => void,
): z.infer<S[keyof S]> | undefined {
  const holder = under === undefined ? raw : isObject(raw) ? raw[under] : undefined;
  const kinds = isObject(holder) ? Object.keys(holder).filter((k) => k in schemas) : [];
  if (kinds.length !== 1) {
    issues.push({
      path: under === undefined ? path : [...path, under],
      message: `needs exactly one of ${Object.keys(schemas).join(', ')}`,
    });
    return undefined;
  }
  const parsed = schemas[kinds[0] as keyof S]!.safeParse(raw);
  if (parsed.success) return parsed.data as z.infer<S[keyof S]>;
  collect(path, parsed.error);
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** What the schema cannot see: kline types the codes' product class lacks, operators' inputs. */
function checkKlineStep(step: KlinePipelineStep, i: number, issues: Issue[]): void {
  const { codes: stepCodes, klineTypes } = step.source.kline;
  klineTypes.forEach((k, t) => {
    const problem = klineTypeProblem(stepCodes, k);
    if (problem !== undefined)
      issues.push({ path: ['pipelines', i, 'source', 'kline', 'klineTypes', t], message: problem });
  });
  step.operators.forEach((op, j) => {
    const at = ['pipelines', i, 'operators', j];
    if ('yesterdayClose' in op && !klineTypes.includes(8 as KlineType))
      issues.push({
        path: [...at, 'yesterdayClose'],
        message: 'needs daily bars: add 8 to source.kline.klineTypes',
      });
    // A resample takes the source types that nest in its target (1-minute bars into 15 minutes
    // beside daily bars); one that takes none is a mistake.
    if ('resample' in op && resampledTypes(klineTypes, op.resample.to).length === 0)
      issues.push({
        path: [...at, 'resample', 'to'],
        message: klineTypes.map((k) => resampleProblem(k, op.resample.to)).join('; '),
      });
  });
}

function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(document)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Reads and validates a pipeline file; an unreadable file is a usage error too. */
export async function loadPipelineFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<PipelineFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `PIPELINE.yaml ${JSON.stringify(path)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parsePipelineFile(text, path, env);
}

/** The source kline types whose bars a `resample` operator with target `to` takes. */
export function resampledTypes(klineTypes: readonly KlineType[], to: ResampleTarget): KlineType[] {
  return klineTypes.filter((k) => resampleProblem(k, to) === undefined);
}
