// A simulator in its own process for the sync benchmark, so the benchmark's RSS is the sync's
// alone. Prints its URL as the first line; stops on SIGTERM.
import { defaultCatalogue, startSimulator, syntheticCatalogue } from '@quoteflow/simulator';

const count = Number(process.argv[2] ?? 10_000);
const clockSpeed = Number(process.argv[3] ?? 1);
const sim = await startSimulator({
  port: 0,
  tokens: { 'bench-kline-sync': 'professional' },
  seed: 3,
  clockSpeed,
  products: [...defaultCatalogue(), ...syntheticCatalogue({ count, classes: ['crypto'] })],
});
console.log(sim.url);
process.on('SIGTERM', () => {
  console.error(`refused ${sim.log.refused().length}`);
  void sim.close().then(() => process.exit(0));
});
