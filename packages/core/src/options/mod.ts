/**
 * The checks of options objects every part of Fedwork shares: unknown
 * names refused with a "did you mean" suggestion, and durations, counts and
 * sizes checked with one wording.
 * @module
 * @since 0.3.0
 */
export {
  assertKnownOptions,
  closestName,
  findUnknownOption,
  type KnownOptionsContext,
  UnknownOptionError,
  unknownOptionMessage,
} from "./known-options.ts";
export {
  MAX_TIMER_MS,
  nonNegativeIntegerOption,
  positiveDurationOption,
  positiveIntegerOption,
} from "./value-options.ts";
