import { KafkaSink, type KafkaDelivery } from '@quoteflow/sinks';
import { envSecondsMs } from './env-seconds.js';

/** The settings a CLI command gives its Kafka sink. */
export interface CliKafkaOptions {
  readonly brokers: string | readonly string[];
  readonly topicPrefix: string;
  /** K-lines: `--kafka-delivery`; unset, exactly once where the brokers run transactions. */
  readonly delivery?: KafkaDelivery | undefined;
  /** K-lines: `--kafka-transactional-id`, the stem of the sink's transactional id. */
  readonly transactionalId?: string | undefined;
}

/**
 * How long a batch may stay unacknowledged before the sink (and so the command) fails: the
 * contract's 30 s, not the library's patient default, so a broker that goes away during a run is
 * reported while the run is still being watched. `QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S` changes it.
 */
export const CLI_KAFKA_DELIVERY_TIMEOUT_MS = 30_000;

/** The sink options of a CLI command: its brokers and prefix, delivery bounded for operators. */
export function cliKafkaSinkOptions(
  kafka: CliKafkaOptions,
  env: Readonly<Record<string, string | undefined>>,
): { brokers: string | readonly string[]; topicPrefix: string; deliveryTimeoutMs: number } {
  const deliveryTimeoutMs = envSecondsMs(
    env,
    'QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S',
    CLI_KAFKA_DELIVERY_TIMEOUT_MS / 1000,
  );
  return { brokers: kafka.brokers, topicPrefix: kafka.topicPrefix, deliveryTimeoutMs };
}

/**
 * Connects to the Kafka cluster before the command asks the service for anything or writes a
 * file, so an unreachable broker fails it (exit 1, naming Kafka) within `timeoutMs` instead of
 * after data was fetched that it could not deliver. SIGINT/SIGTERM during the wait fail it too,
 * with that cause.
 */
export async function checkKafka(
  kafka: CliKafkaOptions,
  options: { readonly timeoutMs: number; readonly signal: AbortSignal; readonly flag?: string },
): Promise<void> {
  // The command's own bound decides (the sink's would end the wait at 30 s of a longer --duration).
  const sink = new KafkaSink({
    brokers: kafka.brokers,
    topicPrefix: kafka.topicPrefix,
    firstConnectTimeoutMs: options.timeoutMs + 60_000,
  });
  const where = `Kafka at ${[kafka.brokers].flat().join(',')} (${options.flag ?? '--kafka'})`;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      sink.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${where} did not answer within ${Math.round(options.timeoutMs / 1000)} s`)),
          options.timeoutMs,
        );
        onAbort = () => reject(new Error(`${where} had not answered when the command was stopped`));
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } catch (err) {
    throw err instanceof Error && err.message.startsWith(where)
      ? err
      : new Error(`${where} cannot be reached`, { cause: err });
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) options.signal.removeEventListener('abort', onAbort);
    // A connect still retrying must not hold the command: close without waiting for it.
    sink.close().catch(() => undefined);
  }
}
