// The two ways to call the engine constructors: Fedwork's options object
// with the connection in it (`{ client }`, `{ url }`…), and @fedify/redis's
// form, the client (or, for the queue, a function returning one) first and
// any options after it.
import type { RedisClient, RedisConnectionOptions } from "./connection.ts";

const CONNECTION_OPTIONS = ["client", "createClient", "url", "redisOptions"] as const;

/** Whether `value` is an ioredis client (duck-typed, as the connection source checks it). */
function isRedisClient(value: unknown): value is RedisClient {
  const candidate = value as { evalsha?: unknown; duplicate?: unknown } | null | undefined;
  return candidate != null && typeof candidate === "object" &&
    typeof candidate.evalsha === "function" && typeof candidate.duplicate === "function";
}

function describeArgument(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return typeof value;
}

/**
 * Turns a constructor's arguments into its options object.  An ioredis
 * client first becomes the `client` option, a function first the
 * `createClient` option (Fedify's queue takes such a factory), and the
 * options after it are Fedwork's others.  Anything else first must be
 * Fedwork's options object, alone.
 * @param first The first argument.
 * @param second The second argument, `undefined` when absent.
 * @param where The constructor, e.g. `"new RedisKvStore()"`.
 * @param fedifyForm How Fedify's form is written there, for the message.
 * @returns The options.
 * @throws {TypeError} When the first argument is none of these, or the
 *         connection is given twice.
 */
export function resolveConstructorArguments<T extends RedisConnectionOptions>(
  first: unknown,
  second: unknown,
  where: string,
  fedifyForm: string,
): T {
  const connection = isRedisClient(first)
    ? { client: first }
    : typeof first === "function"
    ? { createClient: first as () => RedisClient }
    : undefined;
  if (connection != null) {
    if (second === undefined) return connection as T;
    if (second === null || typeof second !== "object" || Array.isArray(second)) {
      throw new TypeError(
        `The second argument of ${where} must be an options object; got ${
          describeArgument(second)
        }.`,
      );
    }
    const twice = CONNECTION_OPTIONS.find((name) =>
      (second as Record<string, unknown>)[name] !== undefined
    );
    if (twice !== undefined) {
      throw new TypeError(
        `${where} got its Redis connection as its first argument; the ${twice} option ` +
          "cannot come too.",
      );
    }
    return { ...second, ...connection } as T;
  }
  if (first != null && typeof first === "object" && !Array.isArray(first)) {
    if (second !== undefined) {
      throw new TypeError(
        `${where} takes a second argument only after a Redis client (${fedifyForm}); with ` +
          "an options object, put every option in it.",
      );
    }
    return first as T;
  }
  throw new TypeError(
    `${where} takes an ioredis Redis or Cluster client, a function returning one ` +
      `(${fedifyForm}, as in Fedify), or an options object ({ client }, { createClient }, ` +
      `{ url }); got ${describeArgument(first)}.`,
  );
}

/**
 * Advice for the options of `@fedify/redis` that Fedwork's Redis classes
 * do not take, for {@link assertKnownOptions}'s `hints`.
 */
export const FEDIFY_REDIS_HINTS: Readonly<Record<string, string>> = {
  keyPrefix: "Fedwork's keys are <prefix>:kv:<key> (the queue's {<prefix>:<queue>}:…); " +
    'use the prefix option, without the trailing colons (e.g. prefix: "myapp").',
  codec: "Fedwork stores values as JSON text (object keys sorted) and takes no codec; remove " +
    "the option.",
  workerId: "Fedwork's queue gives each listener a lease owner id of its own; remove the option.",
  channelKey: "Fedwork names its keys and wake-up channel from the prefix and queue options; " +
    "use those.",
  queueKey: "Fedwork names its keys from the prefix and queue options; use queue (and prefix).",
  lockKey: "Fedwork's queue hands out messages by lease and needs no lock key; use the prefix " +
    "and queue options to keep queues apart.",
};
