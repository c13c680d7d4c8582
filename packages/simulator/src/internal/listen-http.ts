/** The simulator's HTTP server: listening on a host and port, and closing every connection once. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening and closes every connection; idempotent. */
  close(): Promise<void>;
}

export async function listenHttp(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  port: number,
  host: string,
): Promise<Listening> {
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: `simulator internal error: ${err instanceof Error ? err.message : String(err)}`,
          }),
        );
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return { url: `http://${hostForUrl}:${address.port}`, host: address.address, port: address.port, close };
}
