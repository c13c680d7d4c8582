// `@quoteflow/operators/internal`: what quoteflow's own packages (and their tests) need from this package
// and users do not. Not covered by semver: a name here may change or go in any release.
export { expectedBarsBetween } from './expected-bars-between.js';
export { haltExplainsGap } from './halt-explains-gap.js';
export type { Halt } from './halt-explains-gap.js';
export { resampleProblem } from './bar-resampler.js';
