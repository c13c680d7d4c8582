let counter = 0;

/** A process-unique source id (`depth-3`) for the scheduler's fair sharing. */
export function nextSourceId(kind: string): string {
  counter += 1;
  return `${kind}-${counter}`;
}
