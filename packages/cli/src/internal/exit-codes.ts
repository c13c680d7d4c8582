/**
 * The CLI's exit codes (contract.md): success, anything else, bad usage or config, service refusal;
 * and, with `--exit-when-budget-spent`, the token's daily budget spent: 75, sysexits' EX_TEMPFAIL
 * ("a temporary failure: try again later"), which schedulers and mail systems already read so,
 * far from the contract's small numbers.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, refused: 3, budgetSpent: 75 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
