/** Refuses a `startSimulator` option that is not what it must be, naming it and what it got. */
export function checkOption(ok: boolean, name: string, expected: string, got: unknown): void {
  if (!ok) throw new RangeError(`startSimulator: "${name}" must be ${expected}, got ${JSON.stringify(got)}`);
}
