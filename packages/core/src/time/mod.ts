export { type DurationInput, durationToMilliseconds, millisecondsToDuration } from "./duration.ts";
