import { getLogger } from "@logtape/logtape";
import { type Cluster, Redis, type RedisOptions } from "ioredis";

const logger = getLogger(["fedwork", "redis"]);

/**
 * An ioredis client: a standalone (or Sentinel) `Redis` connection or a
 * `Cluster`.
 * @since 0.1.0
 */
export type RedisClient = Redis | Cluster;

/**
 * How a Redis-backed Fedwork class gets its connections.  Give exactly one
 * of `client`, `createClient`, `url` (optionally with `redisOptions`) or
 * `redisOptions`.
 *
 * Ownership: connections the class opens itself (from `createClient`,
 * `url` or `redisOptions`, and the duplicate it makes of `client` for
 * blocking or subscriber use) are closed by its `[Symbol.asyncDispose]()`.
 * A `client` you pass in is never closed by Fedwork: close it yourself.
 * @since 0.1.0
 */
export interface RedisConnectionOptions {
  /**
   * An open ioredis client (`Redis`, or `Cluster` for Redis Cluster) to
   * send commands on.  Fedwork leaves it open
   * when disposed.  Where a second connection is needed (a subscriber for
   * wake-ups), Fedwork opens one with `client.duplicate()` and closes that
   * one itself.
   */
  readonly client?: RedisClient;
  /**
   * Returns a new ioredis client (`Redis` or `Cluster`) each time it is
   * called; Fedwork calls it
   * once per connection it needs and closes every client it got from it.
   */
  readonly createClient?: () => RedisClient;
  /** A `redis://` or `rediss://` URL to connect to. */
  readonly url?: string;
  /** ioredis options, used alone or together with `url`. */
  readonly redisOptions?: RedisOptions;
}

/**
 * Opens and closes connections as described by
 * {@link RedisConnectionOptions}, keeping track of which ones it owns.
 */
export class RedisConnectionSource {
  readonly #options: RedisConnectionOptions;
  readonly #owned = new Set<RedisClient>();
  readonly #className: string;

  /**
   * @param options The connection options.
   * @param className The class name used in error messages.
   * @throws {TypeError} When no way or more than one way to connect is given.
   */
  constructor(options: RedisConnectionOptions, className: string) {
    const given = [
      options.client != null ? "client" : undefined,
      options.createClient != null ? "createClient" : undefined,
      options.url != null || options.redisOptions != null ? "url/redisOptions" : undefined,
    ].filter((name) => name !== undefined);
    if (given.length !== 1) {
      throw new TypeError(
        `${className} needs exactly one of the client, createClient, url or redisOptions ` +
          `options to connect to Redis; got ${given.length === 0 ? "none" : given.join(", ")}.`,
      );
    }
    // Duck-typed rather than instanceof: the client may come from another
    // copy of ioredis than the one this package resolves.
    if (
      options.client != null &&
      (typeof options.client.evalsha !== "function" ||
        typeof options.client.duplicate !== "function")
    ) {
      throw new TypeError(
        `The client option of ${className} must be an ioredis Redis or Cluster client.`,
      );
    }
    if (options.createClient != null && typeof options.createClient !== "function") {
      throw new TypeError(
        `The createClient option of ${className} must be a function returning a Redis client.`,
      );
    }
    if (options.url != null && typeof options.url !== "string") {
      throw new TypeError(`The url option of ${className} must be a string.`);
    }
    this.#options = options;
    this.#className = className;
  }

  /** The connection for ordinary commands, opened on first use. */
  #main: RedisClient | undefined;

  /** Returns the connection for ordinary (non-blocking) commands. */
  get main(): RedisClient {
    if (this.#main == null) {
      this.#main = this.#options.client ?? this.open();
    }
    return this.#main;
  }

  /** Opens a new connection that this source owns and will close. */
  open(): RedisClient {
    const { client, createClient, url, redisOptions } = this.#options;
    let redis: RedisClient;
    if (client != null) {
      // Both classes have duplicate(), with signatures TypeScript cannot unite.
      redis = (client as { duplicate(): RedisClient }).duplicate();
    } else if (createClient != null) redis = createClient();
    else if (url != null) redis = new Redis(url, redisOptions ?? {});
    else redis = new Redis(redisOptions ?? {});
    this.#owned.add(redis);
    // Without a listener ioredis prints connection errors to the console;
    // it reconnects on its own, so a log entry is all they need.
    redis.on("error", (error: unknown) => {
      logger.warn("A Redis connection of {className} failed: {error}", {
        className: this.#className,
        error,
      });
    });
    return redis;
  }

  /** Closes one owned connection. */
  async close(redis: RedisClient): Promise<void> {
    if (!this.#owned.delete(redis)) return;
    await quit(redis);
  }

  /** Closes every owned connection; a passed-in `client` stays open. */
  async closeAll(): Promise<void> {
    const owned = [...this.#owned];
    this.#owned.clear();
    this.#main = undefined;
    await Promise.all(owned.map(quit));
  }
}

/**
 * How long closing waits for QUIT's answer before it drops the connection:
 * a client that is still connecting queues QUIT behind the connection, and
 * ioredis keeps trying to connect.
 */
const QUIT_TIMEOUT_MS = 3_000;

async function quit(redis: RedisClient): Promise<void> {
  if (redis.status === "end") return;
  // A client that lost its server would queue QUIT behind a reconnection
  // that may never come (ioredis retries for over a minute by default), and
  // a process shutting down would hang on it: drop it at once.
  if (redis.status === "reconnecting" || redis.status === "close") {
    redis.disconnect();
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), QUIT_TIMEOUT_MS);
  });
  try {
    if (await Promise.race([redis.quit().then(() => false), timedOut])) redis.disconnect();
  } catch {
    // QUIT fails when the connection is already broken; drop it instead.
    redis.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
