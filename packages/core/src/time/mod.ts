export {
  type DurationInput,
  durationToMilliseconds,
  millisecondsToDuration,
  toTemporalDuration,
} from "./duration.ts";
