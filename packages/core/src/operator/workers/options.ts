import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
import type { ResolvedWorkerPresenceOptions } from "./presence.ts";
import type { WorkerPresenceOptions } from "./types.ts";

/** The shortest heartbeat interval: a store write per worker per interval. */
const MIN_HEARTBEAT_INTERVAL_MS = 100;

/**
 * Checks `startQueue()`'s `presence` option.
 * @param options The option's value: `false` turns presence off.
 * @returns The resolved options, or `undefined` when off.
 * @throws {TypeError} When it is not an object or `false`, or a field is
 *         invalid (the message names it).
 * @throws {UnknownOptionError} When it holds a name it does not know.
 * @since 0.3.0
 */
export function resolveWorkerPresenceOptions(
  options: WorkerPresenceOptions | false | undefined,
): ResolvedWorkerPresenceOptions | undefined {
  if (options === false) return undefined;
  if (options != null && (typeof options !== "object" || Array.isArray(options))) {
    throw new TypeError(
      "The presence option of startQueue() must be an object { heartbeatInterval, " +
        "offlineAfterMissedHeartbeats, removeAfter } or false.",
    );
  }
  if (options != null) {
    assertKnownOptions(
      options,
      ["heartbeatInterval", "offlineAfterMissedHeartbeats", "removeAfter"],
      { where: "startQueue()'s presence" },
    );
  }
  const heartbeatIntervalMs = positiveDurationOption(
    options?.heartbeatInterval ?? undefined,
    "presence.heartbeatInterval",
    15_000,
  );
  if (heartbeatIntervalMs < MIN_HEARTBEAT_INTERVAL_MS) {
    throw new RangeError(
      `The presence.heartbeatInterval option of startQueue() must be at least ` +
        `${MIN_HEARTBEAT_INTERVAL_MS} ms; got ${heartbeatIntervalMs} ms.`,
    );
  }
  return {
    heartbeatIntervalMs,
    offlineAfterMissedHeartbeats: positiveIntegerOption(
      options?.offlineAfterMissedHeartbeats ?? undefined,
      "presence.offlineAfterMissedHeartbeats",
      3,
    ),
    removeAfterMs: positiveDurationOption(
      options?.removeAfter ?? undefined,
      "presence.removeAfter",
      3_600_000,
      // A time to live in the store, which no timer holds.
      Infinity,
    ),
  };
}
