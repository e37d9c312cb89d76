// The checks of the health options: the probes' time limit, the readiness
// thresholds, and the handler's paths, access and cache.
import { assertKnownOptions } from "../../options/known-options.ts";
import { nonNegativeIntegerOption, positiveDurationOption } from "../../options/value-options.ts";
import { QUEUE_ROLES, type QueueRole } from "../../processing/queue-roles.ts";
import type { HealthCheckOptions, HealthHandlerOptions } from "./types.ts";

/** `HealthCheckOptions`, checked.  Internal. */
export interface ResolvedHealthCheckOptions {
  readonly timeoutMs: number;
  readonly minWorkers: number;
  /** The limit of each role; a role without one is missing. */
  readonly maxReadyMessages: Readonly<Partial<Record<QueueRole, number>>>;
}

/** `HealthHandlerOptions`, checked.  Internal. */
export interface ResolvedHealthHandlerOptions {
  readonly check: HealthCheckOptions;
  readonly livenessPath: string;
  readonly readinessPath: string;
  readonly token: string | undefined;
  readonly allowLoopback: boolean;
  readonly cacheMs: number;
}

const CHECK_OPTIONS = ["timeout", "minWorkers", "maxReadyMessages"] as const;

/**
 * Checks the options of `checkHealth()`.
 * @param options The options.
 * @param where Where they were given, for the messages.
 * @returns The resolved options.
 * @throws {TypeError} When an option is invalid; the message names it.
 * @since 0.4.0
 */
export function resolveHealthCheckOptions(
  options: HealthCheckOptions | undefined,
  where: string = "checkHealth()",
): ResolvedHealthCheckOptions {
  if (options != null && (typeof options !== "object" || Array.isArray(options))) {
    throw new TypeError(`The options of ${where} must be an object.`);
  }
  assertKnownOptions(options, CHECK_OPTIONS, { where });
  return {
    timeoutMs: positiveDurationOption(options?.timeout, "timeout", 2_000),
    minWorkers: nonNegativeIntegerOption(options?.minWorkers, "minWorkers", 0),
    maxReadyMessages: resolveMaxReady(options?.maxReadyMessages),
  };
}

function resolveMaxReady(
  value: HealthCheckOptions["maxReadyMessages"],
): Partial<Record<QueueRole, number>> {
  if (value === undefined) return {};
  if (typeof value === "number") {
    const limit = nonNegativeIntegerOption(value, "maxReadyMessages", 0);
    return Object.fromEntries(QUEUE_ROLES.map((role) => [role, limit]));
  }
  if (typeof value !== "object" || value == null || Array.isArray(value)) {
    throw new TypeError(
      "The maxReadyMessages option must be a non-negative integer or an object of them " +
        `by role (${QUEUE_ROLES.join(", ")}).`,
    );
  }
  assertKnownOptions(value, QUEUE_ROLES, { prefix: "maxReadyMessages.", where: "checkHealth()" });
  const limits: Partial<Record<QueueRole, number>> = {};
  for (const role of QUEUE_ROLES) {
    const limit = value[role];
    if (limit !== undefined) {
      limits[role] = nonNegativeIntegerOption(limit, `maxReadyMessages.${role}`, 0);
    }
  }
  return limits;
}

const HANDLER_OPTIONS = [
  ...CHECK_OPTIONS,
  "livenessPath",
  "readinessPath",
  "token",
  "allowLoopback",
  "cacheFor",
] as const;

/**
 * Checks the options of `createHealthHandler()`, the check options among
 * them, so that a mistake throws when the handler is made.
 * @param options The options.
 * @returns The resolved options.
 * @throws {TypeError} When an option is invalid; the message names it.
 * @since 0.4.0
 */
export function resolveHealthHandlerOptions(
  options: HealthHandlerOptions | undefined,
): ResolvedHealthHandlerOptions {
  const where = "createHealthHandler()";
  if (options != null && (typeof options !== "object" || Array.isArray(options))) {
    throw new TypeError(`The options of ${where} must be an object.`);
  }
  assertKnownOptions(options, HANDLER_OPTIONS, { where });
  const { livenessPath, readinessPath, token, allowLoopback, cacheFor, ...check } = options ??
    {};
  resolveHealthCheckOptions(check, where);
  const live = pathOption(livenessPath, "livenessPath", "/healthz");
  const ready = pathOption(readinessPath, "readinessPath", "/readyz");
  if (live === ready) {
    throw new TypeError(
      `The livenessPath and readinessPath options must differ; both are ${live}.`,
    );
  }
  if (token !== undefined && (typeof token !== "string" || token.length < 16)) {
    throw new TypeError(
      "The token option must be a string of at least 16 characters (a random secret); " +
        `got ${typeof token === "string" ? `${token.length} characters` : typeof token}.`,
    );
  }
  if (allowLoopback !== undefined && typeof allowLoopback !== "boolean") {
    throw new TypeError(`The allowLoopback option must be a boolean; got ${typeof allowLoopback}.`);
  }
  if (token === undefined && allowLoopback === false) {
    throw new TypeError(
      "With allowLoopback: false the handler needs the token option, or it answers no one.",
    );
  }
  return {
    check,
    livenessPath: live,
    readinessPath: ready,
    token,
    allowLoopback: allowLoopback ?? true,
    cacheMs: cacheFor === undefined ? 1_000 : positiveDurationOption(cacheFor, "cacheFor", 1_000),
  };
}

function pathOption(value: unknown, name: string, defaultPath: string): string {
  if (value === undefined) return defaultPath;
  if (typeof value !== "string" || !value.startsWith("/")) {
    throw new TypeError(
      `The ${name} option must be a path starting with "/"; got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}
