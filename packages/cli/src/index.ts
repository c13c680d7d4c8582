export { runCli } from './run-cli.js';
export type { CliIo, CommandContext } from './command-context.js';
export { EXIT } from './internal/exit-codes.js';
export type { ExitCode } from './internal/exit-codes.js';
