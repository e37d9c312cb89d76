// The per-host limits of the hostPolicy option: how many deliveries to one
// host may be in flight at once, and how many may start per period.  A
// number or an object is checked when the federation is made; a function's
// answers are checked each time it is asked, since they come at delivery.
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";
import type { DurationInput } from "../../time/duration.ts";

/**
 * A per-host rate: at most `limit` deliveries start per `period`.
 * @since 0.4.0
 */
export interface HostRate {
  /** How many deliveries may start per period; a positive integer. */
  readonly limit: number;
  /** The period, a positive duration of at most a day. */
  readonly period: DurationInput;
}

/**
 * The per-host concurrency as a function: gets a host's normalised name
 * (lower case, punycode, no port) and returns how many deliveries to it may
 * be in flight at once, or `undefined` (or `null`) for no limit.
 * @since 0.4.0
 */
export type HostConcurrencyFunction = (host: string) => number | null | undefined;

/**
 * The per-host rate as a function: gets a host's normalised name and
 * returns its {@link HostRate}, or `undefined` (or `null`) for none.
 * @since 0.4.0
 */
export type HostRateFunction = (host: string) => HostRate | null | undefined;

/** A rate, checked: `limit` starts per `periodMs`. */
export interface ResolvedHostRate {
  readonly limit: number;
  readonly periodMs: number;
}

/** The largest per-host concurrency: more is no limit worth a store round trip. */
export const MAX_HOST_CONCURRENCY = 10_000;
/** The longest rate period. */
const MAX_RATE_PERIOD_MS = 24 * 60 * 60_000;
/** The most starts per period: past this, starts would be under a microsecond apart. */
const MAX_RATE_LIMIT = 1_000_000;

/**
 * Checks `hostPolicy.concurrency`.  Internal.
 * @param value The option.
 * @returns A function giving each host's limit, or `undefined` for none.
 * @throws {FederationOptionError} When the value is neither a positive
 *         integer nor a function.
 * @since 0.4.0
 */
export function resolveHostConcurrency(
  value: number | HostConcurrencyFunction | undefined,
): ((host: string) => number | undefined) | undefined {
  if (value === undefined) return undefined;
  const name = "hostPolicy.concurrency";
  if (typeof value === "function") {
    return (host) => {
      const limit = value(host);
      if (limit == null) return undefined;
      const label = `${name}(${JSON.stringify(host)})`;
      return checkFederationOption(label, () => concurrencyValue(limit, label));
    };
  }
  const limit = checkFederationOption(name, () => concurrencyValue(value, name));
  return () => limit;
}

function concurrencyValue(value: unknown, name: string): number {
  return positiveIntegerOption(value, name, 1, MAX_HOST_CONCURRENCY);
}

/**
 * Checks `hostPolicy.rate`.  Internal.
 * @param value The option.
 * @returns A function giving each host's rate, or `undefined` for none.
 * @throws {FederationOptionError} When the value is neither a
 *         {@link HostRate} nor a function; the message names the field
 *         (`hostPolicy.rate.period`, say).
 * @since 0.4.0
 */
export function resolveHostRate(
  value: HostRate | HostRateFunction | undefined,
): ((host: string) => ResolvedHostRate | undefined) | undefined {
  if (value === undefined) return undefined;
  const name = "hostPolicy.rate";
  if (typeof value === "function") {
    return (host) => {
      const rate = value(host);
      return rate == null ? undefined : rateValue(rate, `${name}(${JSON.stringify(host)})`);
    };
  }
  const rate = rateValue(value, name);
  return () => rate;
}

function rateValue(value: unknown, name: string): ResolvedHostRate {
  if (typeof value !== "object" || value == null || Array.isArray(value)) {
    throw new FederationOptionError(
      name,
      `The ${name} option must be an object such as { limit: 10, period: { seconds: 1 } } ` +
        "or a function of the host.",
    );
  }
  const rate = value as Partial<HostRate>;
  assertKnownOptions(rate, ["limit", "period"], { prefix: `${name}.` });
  if (rate.limit === undefined || rate.period === undefined) {
    throw new FederationOptionError(
      name,
      `The ${name} option needs both limit and period, such as ` +
        "{ limit: 10, period: { seconds: 1 } }.",
    );
  }
  const limit = checkFederationOption(
    `${name}.limit`,
    () => positiveIntegerOption(rate.limit, `${name}.limit`, 1, MAX_RATE_LIMIT),
  );
  const periodMs = checkFederationOption(
    `${name}.period`,
    () => positiveDurationOption(rate.period, `${name}.period`, 1000, MAX_RATE_PERIOD_MS),
  );
  return { limit, periodMs };
}
