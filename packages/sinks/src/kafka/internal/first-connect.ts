import { createConnection } from 'node:net';
import { OperationTimeout } from './with-timeout.js';

/**
 * The sink's first connection (`connect`), bounded: once `timeoutMs` passed without it, an
 * {@link OperationTimeout} naming the brokers, the option and what a plain TCP connection to each
 * broker meets (`connect ECONNREFUSED 127.0.0.1:9092`, a timeout, or that it connects, so the
 * Kafka handshake is what fails). The driver would otherwise retry a refused connection for its
 * whole delivery timeout, silently. `connect` runs on, as with `withTimeout`.
 */
export async function firstConnect(
  connect: Promise<void>,
  brokers: readonly string[],
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void probeBrokers(brokers, Math.min(5_000, timeoutMs)).then((seen) =>
        reject(
          new OperationTimeout(
            `no connection to Kafka at ${brokers.join(',')} within firstConnectTimeoutMs = ${timeoutMs} ms (${seen})`,
          ),
        ),
      );
    }, timeoutMs);
  });
  try {
    await Promise.race([connect, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a plain TCP connection to each broker meets, as one line: `HOST:PORT: what; …`. */
export async function probeBrokers(brokers: readonly string[], timeoutMs: number): Promise<string> {
  const seen = await Promise.all(brokers.map((b) => probeBroker(b, timeoutMs)));
  return brokers.map((b, i) => `${b}: ${seen[i]!}`).join('; ');
}

/** What a TCP connection meets where nothing listens or the name does not resolve: known at once. */
const REFUSED = /ECONNREFUSED|ENOTFOUND|EAI_NONAME|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/;

/**
 * What a plain TCP connection to each broker meets, as {@link probeBrokers} says it, when every one
 * of them refuses it or cannot be resolved (nothing there to wait for); `undefined` when any
 * broker accepts a connection or does not answer at once (a broker that stalls is waited for).
 */
export async function refusedEverywhere(
  brokers: readonly string[],
  timeoutMs: number,
): Promise<string | undefined> {
  const seen = await Promise.all(brokers.map((b) => probeBroker(b, timeoutMs)));
  return seen.every((what) => REFUSED.test(what))
    ? brokers.map((b, i) => `${b}: ${seen[i]!}`).join('; ')
    : undefined;
}

function probeBroker(broker: string, timeoutMs: number): Promise<string> {
  const at = broker.lastIndexOf(':');
  const host = (at < 0 ? broker : broker.slice(0, at)).replace(/^\[|\]$/g, '');
  const port = at < 0 ? 9092 : Number(broker.slice(at + 1));
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (what: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done(`no TCP connection within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done('accepts TCP connections, but no Kafka answer'));
    socket.once('error', (err: Error) => done(err.message));
  });
}
