import { createServer, type AddressInfo, type Socket } from 'node:net';

/** A listener on 127.0.0.1 that accepts connections and never answers (a broker that stalls). */
export interface StalledListener {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Ends its connections and stops listening. */
  close(): Promise<void>;
}

/** Starts a {@link StalledListener} on a free port. */
export async function stalledListener(): Promise<StalledListener> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((done) => server.close(() => done()));
    },
  };
}
