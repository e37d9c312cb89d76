// The hostPolicy federation option: which remote hosts deliveries and the
// inbox refuse, and how long a host's Retry-After may hold its deliveries.
// Checked once, when the federation is made.
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveDurationOption } from "../../options/value-options.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";
import type { DurationInput } from "../../time/duration.ts";
import { normalizeHostName } from "./host-name.ts";
import {
  type HostConcurrencyFunction,
  type HostRate,
  type HostRateFunction,
  type ResolvedHostRate,
  resolveHostConcurrency,
  resolveHostRate,
} from "./limits-options.ts";

/**
 * Decides whether a remote host is blocked: gets the host's name,
 * normalised (lower case, punycode, no trailing dot, no port), and returns
 * `true` to block it.
 * @since 0.4.0
 */
export type HostBlockPredicate = (host: string) => boolean | Promise<boolean>;

/**
 * The `hostPolicy` federation option: what deliveries and the inbox do
 * with particular remote hosts.
 * @since 0.4.0
 */
export interface HostPolicyOptions {
  /**
   * The hosts to refuse: a list of host names or domains (a domain blocks
   * its subdomains too; case, trailing dots, ports and Unicode or
   * punycode spellings do not matter), or a function that gets a host's
   * normalised name and returns whether it is blocked.  A delivery to a
   * blocked host sends no request and is `dropped`; a fan-out skips its
   * inboxes; the inbox answers 403 to an activity whose signature's key or
   * actor is on a blocked host, before fetching any key.
   * @default no host is blocked
   */
  readonly block?: readonly string[] | HostBlockPredicate;
  /**
   * How a `Retry-After` answered with 429 or 503 is honoured: the
   * delivery, and every other delivery to that host, waits that long
   * (without counting an attempt), but never longer than `max`.  `false`
   * treats such an answer as any failed attempt.
   * @default `{ max: { hours: 1 } }`
   */
  readonly retryAfter?: { readonly max?: DurationInput } | false;
  /**
   * How many deliveries to one host (its name and port) may be in flight
   * at once, across every worker process sharing the federation's
   * key–value store: a positive integer (at most 10,000), or a function
   * of the host's normalised name returning one (or `undefined` for no
   * limit).  A delivery that finds its host's slots taken waits in the
   * outbox queue, without holding a worker or spending an attempt.  Needs
   * a key–value store with `cas()`.
   * @default no limit
   * @since 0.4.0
   */
  readonly concurrency?: number | HostConcurrencyFunction;
  /**
   * How many deliveries to one host may start per period, across every
   * worker process: `{ limit, period }` (starts are spread evenly, one
   * every `period / limit`), or a function of the host's normalised name
   * returning one (or `undefined` for none).  A delivery that must wait
   * for its start waits in the outbox queue, without holding a worker or
   * spending an attempt.  Needs a key–value store with `cas()`.
   * @default no limit
   * @since 0.4.0
   */
  readonly rate?: HostRate | HostRateFunction;
}

/**
 * {@link HostPolicyOptions}, checked.  Internal.
 * @since 0.4.0
 */
export interface ResolvedHostPolicy {
  /**
   * Whether a host is blocked; `undefined` when nothing is.
   * @param host A host name, normalised by {@link normalizeHostName}.
   */
  readonly isBlocked?: HostBlockPredicate;
  /** The longest wait a `Retry-After` may cause, in ms; absent when off. */
  readonly maxRetryAfterMs?: number;
  /**
   * A host's concurrency limit; `undefined` when none is set.
   * @param host A host name, normalised by {@link normalizeHostName}.
   * @throws {FederationOptionError} When a function returned an invalid
   *         limit, naming it (`hostPolicy.concurrency("a.example")`).
   */
  readonly concurrencyOf?: (host: string) => number | undefined;
  /**
   * A host's rate; `undefined` when none is set.
   * @param host A host name, normalised by {@link normalizeHostName}.
   * @throws {FederationOptionError} When a function returned an invalid
   *         rate.
   */
  readonly rateOf?: (host: string) => ResolvedHostRate | undefined;
}

const DEFAULT_MAX_RETRY_AFTER_MS = 60 * 60_000;
/** A host waited on longer than this is better given up by its retry policy. */
const MAX_MAX_RETRY_AFTER_MS = 7 * 24 * 60 * 60_000;

/**
 * Checks the `hostPolicy` option.
 * @param option The option's value.
 * @returns The resolved policy, or `undefined` when there is none.
 * @throws {FederationOptionError} When a value is invalid; the message
 *         names it (`hostPolicy.block[2]`, say).
 * @since 0.4.0
 */
export function resolveHostPolicy(
  option: HostPolicyOptions | false | undefined,
): ResolvedHostPolicy | undefined {
  if (option == null || option === false) return undefined;
  if (typeof option !== "object" || Array.isArray(option)) {
    throw new FederationOptionError(
      "hostPolicy",
      'The hostPolicy option must be an object such as { block: ["spam.example"] } or false.',
    );
  }
  assertKnownOptions(option, ["block", "retryAfter", "concurrency", "rate"], {
    prefix: "hostPolicy.",
  });
  const isBlocked = resolveBlock(option.block);
  const maxRetryAfterMs = resolveRetryAfter(option.retryAfter);
  const concurrencyOf = resolveHostConcurrency(option.concurrency);
  const rateOf = resolveHostRate(option.rate);
  return {
    ...(isBlocked == null ? {} : { isBlocked }),
    ...(maxRetryAfterMs == null ? {} : { maxRetryAfterMs }),
    ...(concurrencyOf == null ? {} : { concurrencyOf }),
    ...(rateOf == null ? {} : { rateOf }),
  };
}

function resolveBlock(block: HostPolicyOptions["block"]): HostBlockPredicate | undefined {
  if (block === undefined) return undefined;
  if (typeof block === "function") return block;
  if (!Array.isArray(block)) {
    throw new FederationOptionError(
      "hostPolicy.block",
      "The hostPolicy.block option must be a list of host names or a function " +
        `(host) => boolean; got ${typeof block}.`,
    );
  }
  const blocked = new Set<string>();
  block.forEach((entry, index) => {
    const name = `hostPolicy.block[${index}]`;
    blocked.add(checkFederationOption(name, () => normalizeBlockEntry(entry, name)));
  });
  if (blocked.size === 0) return undefined;
  return (host) => isInDomains(host, blocked);
}

function normalizeBlockEntry(entry: unknown, name: string): string {
  if (typeof entry !== "string") {
    throw new TypeError(`The ${name} option must be a host name; got ${typeof entry}.`);
  }
  if (entry.startsWith("*.")) {
    throw new TypeError(
      `The ${name} option must be a host name without a wildcard (${
        JSON.stringify(entry)
      }): a domain blocks its subdomains already; write ${JSON.stringify(entry.slice(2))}.`,
    );
  }
  const host = normalizeHostName(entry);
  if (host == null) {
    throw new TypeError(
      `The ${name} option must be a host name such as "spam.example" (no scheme, path or ` +
        `user); got ${JSON.stringify(entry)}.`,
    );
  }
  return host;
}

/** Whether a host is one of the domains or a subdomain of one. */
function isInDomains(host: string, domains: ReadonlySet<string>): boolean {
  if (domains.has(host)) return true;
  // An address has no parent domain.
  if (host.startsWith("[") || /^[\d.]+$/.test(host)) return false;
  for (let dot = host.indexOf("."); dot >= 0; dot = host.indexOf(".", dot + 1)) {
    if (domains.has(host.slice(dot + 1))) return true;
  }
  return false;
}

function resolveRetryAfter(retryAfter: HostPolicyOptions["retryAfter"]): number | undefined {
  if (retryAfter === false) return undefined;
  if (retryAfter === undefined) return DEFAULT_MAX_RETRY_AFTER_MS;
  if (typeof retryAfter !== "object" || retryAfter == null) {
    throw new FederationOptionError(
      "hostPolicy.retryAfter",
      "The hostPolicy.retryAfter option must be an object such as { max: { hours: 1 } } or " +
        "false.",
    );
  }
  assertKnownOptions(retryAfter, ["max"], { prefix: "hostPolicy.retryAfter." });
  return checkFederationOption(
    "hostPolicy.retryAfter.max",
    () =>
      positiveDurationOption(
        retryAfter.max,
        "hostPolicy.retryAfter.max",
        DEFAULT_MAX_RETRY_AFTER_MS,
        MAX_MAX_RETRY_AFTER_MS,
      ),
  );
}
