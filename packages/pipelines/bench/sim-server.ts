// A simulator in its own process for the sync benchmark, so the benchmark's RSS is the sync's
// alone. Prints its URL as the first line; stops on SIGTERM. It runs on the real clock, like the
// benchmark's client: a separate process cannot share the client's clock object.
import { defaultCatalogue, startSimulator, syntheticCatalogue } from '@quoteflow/simulator';

const count = Number(process.argv[2] ?? 10_000);
const sim = await startSimulator({
  port: 0,
  tokens: { 'bench-kline-sync': 'professional' },
  seed: 3,
  products: [...defaultCatalogue(), ...syntheticCatalogue({ count, classes: ['crypto'] })],
});
console.log(sim.url);
process.on('SIGTERM', () => {
  console.error(`refused ${sim.log.refused().length}`);
  void sim.close().then(() => process.exit(0));
});
