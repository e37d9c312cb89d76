import type { HostHealthChange } from "./types.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { ResolvedHostHealthOptions } from "./mod.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
import { assertKnownOptions } from "../../options/known-options.ts";

/**
 * Remote-server health for delivery (the `hostHealth` option): after
 * `failureThreshold` deliveries to one host failed in a row, deliveries to
 * it are parked in the key–value store instead of retried, and a probe
 * re-checks it with growing delays; once it answers, the parked deliveries
 * are enqueued again.  A host that stays down past `maxProbeAttempts`
 * probes or `maxUnhealthyDuration` is declared dead: its parked deliveries
 * and every new one fail for good into the failed-task store until it is
 * released (`releaseHost()`) or, after `deadHostCooldown`, a delivery to it
 * succeeds.
 * @since 0.2.0
 */
export interface FederationHostHealthOptions {
  /**
   * How many deliveries to one host must fail in a row (network errors,
   * 5xx, 408, 429; not other 4xx) before it is marked unhealthy.  A
   * positive integer.
   * @default `10`
   */
  readonly failureThreshold?: number;
  /**
   * How long after a host turns unhealthy it is probed first.
   * @default `{ minutes: 1 }`
   */
  readonly initialProbeDelay?: DurationInput;
  /**
   * The longest delay between two probes; each failed probe doubles the
   * delay up to this.
   * @default `{ hours: 6 }`
   */
  readonly maxProbeDelay?: DurationInput;
  /**
   * How long a probe waits for an answer.
   * @default `{ seconds: 10 }`
   */
  readonly probeTimeout?: DurationInput;
  /**
   * How many probes in a row may fail before the host is declared dead.
   * With the default delays, the 10th probe runs about 14½ hours after the
   * host turned unhealthy.  A positive integer.
   * @default `10`
   * @since 0.3.0
   */
  readonly maxProbeAttempts?: number;
  /**
   * How long a host may stay unhealthy before it is declared dead (checked
   * when a probe fails), whatever the number of probes.
   * @default `{ hours: 24 }`
   * @since 0.3.0
   */
  readonly maxUnhealthyDuration?: DurationInput;
  /**
   * How long after a host was declared dead (or after its last trial) one
   * delivery to it is tried again; when it succeeds the host is healthy
   * again, when it fails it fails for good and the cool-down starts over.
   * `false`: only `releaseHost()` brings it back.
   * @default `{ days: 1 }`
   * @since 0.3.0
   */
  readonly deadHostCooldown?: DurationInput | false;
  /**
   * How many deliveries may be parked for one host; past it, a delivery
   * to it fails for good at once (into the failed-task store).  About: the
   * count is kept in the host's record and set right at each probe.
   * @default `10000`
   * @since 0.3.0
   */
  readonly maxParkedDeliveries?: number;
  /**
   * How long a delivery stays parked at most; past it, it fails for good
   * (into the failed-task store) at the host's next probe.
   * @default `{ days: 2 }`
   * @since 0.3.0
   */
  readonly parkedRetention?: DurationInput;
  /**
   * Called on each change of a host's state, in the process that made the
   * change (exactly one process per change).  A callback that throws is
   * logged.
   */
  readonly onChange?: (change: HostHealthChange) => void | Promise<void>;
}

export type { ResolvedHostHealthOptions };

/**
 * Checks what the `hostHealth` option needs of the other options: an
 * outbox queue, into which parked deliveries are released, and a KvStore
 * with `list()`, where they are listed.
 * @param outbox The outbox queue, if any.
 * @param kv The key–value store.
 * @returns The outbox queue.
 * @throws {FederationOptionError} When either is missing.
 */
export function hostHealthOutbox(outbox: MessageQueue | undefined, kv: KvStore): MessageQueue {
  if (outbox == null) {
    throw new FederationOptionError(
      "hostHealth",
      "The hostHealth option needs an outbox queue (the queue option): parked deliveries " +
        "are released into it.",
    );
  }
  if (typeof kv.list !== "function") {
    throw new FederationOptionError(
      "hostHealth",
      "The hostHealth option needs a KvStore with list(): parked deliveries are listed there.",
    );
  }
  return outbox;
}

/**
 * Checks the `hostHealth` option.
 * @param options The option's value; `undefined` or `false` turns it off.
 * @returns The resolved options, or `undefined` when off.
 * @throws {FederationOptionError} When a field is invalid.
 */
export function resolveHostHealthOptions(
  options: FederationHostHealthOptions | false | undefined,
): ResolvedHostHealthOptions | undefined {
  if (options == null || options === false) return undefined;
  if (typeof options !== "object") {
    throw new FederationOptionError(
      "hostHealth",
      "The hostHealth option must be an object (e.g. {} for the defaults) or false.",
    );
  }
  assertKnownOptions(options, HOST_HEALTH_OPTION_NAMES, { prefix: "hostHealth." });
  const failureThreshold = positiveInteger("failureThreshold", options.failureThreshold, 10);
  const initialProbeDelayMs = positiveDuration("initialProbeDelay", options.initialProbeDelay, {
    minutes: 1,
  });
  const maxProbeDelayMs = positiveDuration("maxProbeDelay", options.maxProbeDelay, { hours: 6 });
  // The one that a timer holds: the probe's request.
  const probeTimeoutMs = checkFederationOption(
    "hostHealth.probeTimeout",
    () =>
      positiveDurationOption(options.probeTimeout ?? undefined, "hostHealth.probeTimeout", 10_000),
  );
  if (maxProbeDelayMs < initialProbeDelayMs) {
    throw new FederationOptionError(
      "hostHealth.maxProbeDelay",
      `The hostHealth.maxProbeDelay option (${maxProbeDelayMs} ms) must not be shorter than ` +
        `hostHealth.initialProbeDelay (${initialProbeDelayMs} ms).`,
    );
  }
  const maxProbeAttempts = positiveInteger("maxProbeAttempts", options.maxProbeAttempts, 10);
  const maxParkedDeliveries = positiveInteger(
    "maxParkedDeliveries",
    options.maxParkedDeliveries,
    10_000,
  );
  const maxUnhealthyDurationMs = positiveDuration(
    "maxUnhealthyDuration",
    options.maxUnhealthyDuration,
    { hours: 24 },
  );
  const parkedRetentionMs = positiveDuration("parkedRetention", options.parkedRetention, {
    days: 2,
  });
  const deadHostCooldownMs = options.deadHostCooldown === false
    ? 0
    : positiveDuration("deadHostCooldown", options.deadHostCooldown, { days: 1 });
  if (options.onChange != null && typeof options.onChange !== "function") {
    throw new FederationOptionError(
      "hostHealth.onChange",
      "The hostHealth.onChange option must be a function.",
    );
  }
  return {
    failureThreshold,
    initialProbeDelayMs,
    maxProbeDelayMs,
    probeTimeoutMs,
    maxProbeAttempts,
    maxUnhealthyDurationMs,
    deadHostCooldownMs,
    maxParkedDeliveries,
    parkedRetentionMs,
    ...(options.onChange == null ? {} : { onChange: options.onChange }),
  };
}

const HOST_HEALTH_OPTION_NAMES = [
  "failureThreshold",
  "initialProbeDelay",
  "maxProbeDelay",
  "probeTimeout",
  "maxProbeAttempts",
  "maxUnhealthyDuration",
  "deadHostCooldown",
  "maxParkedDeliveries",
  "parkedRetention",
  "onChange",
];

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const option = `hostHealth.${name}`;
  return checkFederationOption(
    option,
    () => positiveIntegerOption(value ?? undefined, option, fallback),
  );
}

/** A positive duration without a timer's bound: delays and times to live. */
function positiveDuration(
  name: string,
  value: DurationInput | undefined,
  fallback: DurationInput,
): number {
  const option = `hostHealth.${name}`;
  return checkFederationOption(
    option,
    () =>
      positiveDurationOption(
        value ?? undefined,
        option,
        durationToMilliseconds(fallback, option),
        Infinity,
      ),
  );
}
