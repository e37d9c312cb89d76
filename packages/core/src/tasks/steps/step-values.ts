// Small pure helpers of step runs: how long a sleep or wait is, and the
// id of an invoked child.
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import { MAX_STEP_WAIT_MS } from "./limits.ts";

/**
 * The milliseconds of a sleep's or wait's duration, checked.  Internal.
 * @param duration The duration.
 * @param where The caller, for the message.
 * @returns The milliseconds.
 * @throws {RangeError} When it is negative or over 365 days.
 * @since 0.4.0
 */
export function waitMilliseconds(duration: DurationInput, where: string): number {
  const ms = durationToMilliseconds(duration, "duration");
  if (!(ms >= 0 && ms <= MAX_STEP_WAIT_MS)) {
    throw new RangeError(`The duration of ${where} must be from 0 to 365 days; got ${ms} ms.`);
  }
  return ms;
}

/**
 * A UUID derived from the parent's id and the step's: the same on every
 * run, so that a run after a crash enqueues no second child.  Internal.
 * @param parentId The parent task's id.
 * @param stepId The step's id.
 * @returns The child's id.
 * @since 0.4.0
 */
export async function deriveChildId(parentId: string, stepId: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${parentId}\u0000${stepId}`)),
  );
  digest[6] = (digest[6] & 0x0f) | 0x50; // version 5-like (name-based)
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = [...digest.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20, 32)
  }`;
}
