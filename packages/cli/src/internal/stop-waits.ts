/**
 * What a stopping command is still waiting for (a Kafka flush, the files), so a shutdown cut off
 * after 9.5 s names its cause instead of only the time it took.
 */
export class StopWaits {
  readonly #waits = new Set<string>();

  /** Notes `what` as pending from the moment `signal` aborts until the returned function runs. */
  duringStop(signal: AbortSignal, what: string): () => void {
    const onAbort = (): void => void this.#waits.add(what);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return () => {
      signal.removeEventListener('abort', onAbort);
      this.#waits.delete(what);
    };
  }

  /** `still flushing A; B`, or `undefined` when nothing is pending. */
  describe(): string | undefined {
    return this.#waits.size === 0 ? undefined : `still flushing ${[...this.#waits].join('; ')}`;
  }
}

/** The sinks of a command in words: `Kafka at H:P (--kafka) and the files in DIR`. */
export function describeSinks(sinks: {
  readonly out?: string | undefined;
  readonly kafka?: { readonly brokers: string | readonly string[] } | undefined;
}): string {
  const parts: string[] = [];
  if (sinks.kafka !== undefined) parts.push(`Kafka at ${[sinks.kafka.brokers].flat().join(',')}`);
  if (sinks.out !== undefined) parts.push(`the files in ${sinks.out}`);
  return parts.join(' and ');
}
