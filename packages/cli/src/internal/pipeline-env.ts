import { isPair, isScalar, isSeq, parse, visit, type Document } from 'yaml';

/** A `${NAME}` that could not be filled: where it is and why. */
export interface EnvProblem {
  readonly path: (string | number)[];
  readonly line: number | undefined;
  readonly message: string;
}

// `${NAME}`, `${NAME:default}`, and `$${` for a literal `${` (the Redpanda Connect syntax).
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::[^}]*)?\}$/;

/**
 * Fills `${NAME}` and `${NAME:default}` in the document's values from `env`, in place, after
 * parsing (so a value can never inject YAML, and every node keeps its line for error messages). A
 * plain value that is one reference takes the type its text has (`duration: ${SECONDS}` is a
 * number, `codes: ${CODES}` with `[A, B]` a list); quoted values stay strings. Keys are not filled.
 * Returns the references with neither a value nor a default.
 */
export function fillEnvReferences(
  doc: Document,
  env: Readonly<Record<string, string | undefined>>,
  lineOf: (offset: number) => number,
): EnvProblem[] {
  const problems: EnvProblem[] = [];
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return undefined;
      const text = node.value;
      const missing: string[] = [];
      const filled = text.replace(
        REFERENCE,
        (match, name: string | undefined, fallback: string | undefined) => {
          if (name === undefined) return '${';
          const value = env[name];
          if (value !== undefined) return value;
          if (fallback !== undefined) return fallback;
          missing.push(name);
          return match;
        },
      );
      if (missing.length > 0) {
        problems.push({
          path: pathOf(ancestors, node),
          line: node.range === undefined || node.range === null ? undefined : lineOf(node.range[0]),
          message: `environment variable ${missing.join(', ')} is not set (write \${${missing[0]}:default} for a default)`,
        });
        return undefined;
      }
      if (node.type !== 'PLAIN' || !WHOLE_REFERENCE.test(text)) {
        node.value = filled;
        return undefined;
      }
      const typed: unknown = filled.trim() === '' ? '' : parseOrText(filled);
      if (typed !== null && typeof typed === 'object') return doc.createNode(typed);
      node.value = typed;
      return undefined;
    },
  });
  return problems;
}

function parseOrText(text: string): unknown {
  try {
    return parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The key path of `node` from the document's root (`pipelines`, 0, `source`, …). */
function pathOf(ancestors: readonly unknown[], node: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const here = chain[i];
    const next = chain[i + 1];
    if (isPair(here) && isScalar(here.key)) path.push(String(here.key.value));
    else if (isSeq(here)) path.push(here.items.indexOf(next as never));
  }
  return path;
}
