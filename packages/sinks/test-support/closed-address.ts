import { createServer } from 'node:net';

/** An address on 127.0.0.1 where nothing listens (a port just freed): a connection there is refused. */
export async function closedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return `127.0.0.1:${port}`;
}
