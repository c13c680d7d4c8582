import { readFile } from 'node:fs/promises';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { EXCHANGES, PLANS, type KlineType } from '@quoteflow/core';
import { UsageError } from './usage-error.js';

const codes = z.array(z.string().regex(/^\S+$/, 'a product code without spaces')).min(1);
const klineType = z
  .number()
  .int()
  .min(1, 'a kline type from 1 to 10')
  .max(10, 'a kline type from 1 to 10')
  .transform((k) => k as KlineType);

const FilesSinkSchema = z.strictObject({
  out: z.string().min(1),
  format: z.enum(['parquet', 'arrow', 'ndjson']).default('parquet'),
});
const KafkaSinkSchema = z.strictObject({
  brokers: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  topicPrefix: z.string().min(1).default('quoteflow'),
});
const SinksSchema = z
  .strictObject({ files: FilesSinkSchema.optional(), kafka: KafkaSinkSchema.optional() })
  .refine((s) => s.files !== undefined || s.kafka !== undefined, 'at least one of files or kafka');

const KlineStepSchema = z.strictObject({
  name: z.string().min(1).optional(),
  source: z.strictObject({
    kline: z.strictObject({
      codes,
      klineTypes: z.array(klineType).min(1),
      bars: z.number().int().min(0).default(100),
    }),
  }),
  sinks: SinksSchema,
  state: z.string().min(1).optional(),
});
const DepthStepSchema = z.strictObject({
  name: z.string().min(1).optional(),
  source: z.strictObject({
    depth: z.strictObject({ codes, intervalMs: z.number().int().min(1).optional() }),
  }),
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

/** One pipeline of a file: its kind is decided by the key under `source`. */
export type PipelineStep =
  z.infer<typeof KlineStepSchema> | z.infer<typeof DepthStepSchema> | z.infer<typeof SuspensionStepSchema>;

/** A validated pipeline file. */
export type PipelineFile = Omit<z.infer<typeof PipelineFileSchema>, 'pipelines'> & {
  readonly pipelines: readonly PipelineStep[];
};
const STEP_SCHEMAS = {
  kline: KlineStepSchema,
  depth: DepthStepSchema,
  suspensions: SuspensionStepSchema,
} as const;

/**
 * Parses and validates pipeline YAML; every problem becomes a {@link UsageError} that names the
 * file, line and field (`pipeline.yaml:7: pipelines[0].source.kline.klineTypes[1]: ...`).
 */
export function parsePipelineFile(text: string, fileName: string): PipelineFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    throw new UsageError(`${fileName}:${line}:${col}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  const issues: { path: (string | number)[]; message: string }[] = [];
  const collect = (prefix: (string | number)[], error: z.ZodError): void => {
    for (const issue of error.issues) {
      const path = [...prefix, ...(issue.path as (string | number)[])];
      // An unknown key is reported at the key itself.
      if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
      issues.push({ path, message: issue.message });
    }
  };
  const top = PipelineFileSchema.safeParse(doc.toJS());
  const steps: PipelineStep[] = [];
  if (!top.success) collect([], top.error);
  else {
    top.data.pipelines.forEach((raw, i) => {
      const source =
        typeof raw === 'object' && raw !== null && 'source' in raw ? (raw.source as unknown) : undefined;
      const kinds =
        typeof source === 'object' && source !== null
          ? Object.keys(source).filter((k) => k in STEP_SCHEMAS)
          : [];
      if (kinds.length !== 1) {
        issues.push({
          path: ['pipelines', i, 'source'],
          message: `needs exactly one of ${Object.keys(STEP_SCHEMAS).join(', ')}`,
        });
        return;
      }
      const parsed = STEP_SCHEMAS[kinds[0] as keyof typeof STEP_SCHEMAS].safeParse(raw);
      if (parsed.success) steps.push(parsed.data);
      else collect(['pipelines', i], parsed.error);
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

function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(document)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Reads and validates a pipeline file; an unreadable file is a usage error too. */
export async function loadPipelineFile(path: string): Promise<PipelineFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `PIPELINE.yaml ${JSON.stringify(path)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parsePipelineFile(text, path);
}
