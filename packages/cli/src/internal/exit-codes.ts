/** The CLI's exit codes (contract.md): success, anything else, bad usage or config, service refusal. */
export const EXIT = { ok: 0, failure: 1, usage: 2, refused: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
