import type { PubSub } from "@fedwork/core";
import { assertKnownOptions, checkPublication, checkSubscription } from "@fedwork/core/queue-kit";
import type { PubSubSubscribeOptions } from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import type { Sql } from "postgres";
import { resolveClient } from "./client.ts";
import { PostgresClosedError } from "./errors.ts";

const logger = getLogger(["fedwork", "postgres"]);

/**
 * Options for {@link PostgresPubSub}.
 * @since 0.2.0
 */
export interface PostgresPubSubOptions {
  /**
   * Put before every topic to make the `LISTEN`/`NOTIFY` channel name, so
   * that several applications can share one database.  Empty by default
   * (the task updates topic is the channel `fedwork:task-updates`).  The
   * channel name, prefix included, must fit PostgreSQL's 63 bytes.
   */
  readonly prefix?: string;
}

/**
 * The longest channel name PostgreSQL keeps (longer names are truncated,
 * which would mix channels up).
 */
const MAX_CHANNEL_BYTES = 63;

/**
 * A {@link PubSub} on PostgreSQL `LISTEN`/`NOTIFY`, through postgres.js:
 * what carries task progress and state changes between processes that
 * share a database.  Publishing runs `pg_notify()` on the client's pool;
 * subscriptions use the one listening connection postgres.js keeps per
 * client (and re-listens on after a reconnect).  A `NOTIFY` payload is
 * limited to 8000 bytes, which task updates stay under (progress data is
 * limited to 4096 bytes).  Delivery is best effort: a payload sent while
 * the listening connection is down is lost.
 *
 * Pass a connection URL to let it own its client (closed by
 * `[Symbol.asyncDispose]()`), or a postgres.js `Sql` you own (left open).
 *
 * @example
 * ```ts ignore
 * import { PostgresPubSub } from "@fedwork/postgres";
 *
 * const pubsub = new PostgresPubSub("postgres://localhost/app");
 * const federation = createFederation({ kv, queue, pubsub });
 * ```
 * @since 0.2.0
 */
export class PostgresPubSub implements PubSub, AsyncDisposable {
  readonly #sql: Sql;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #active = new Set<{ unlisten(): Promise<void> }>();
  #closed = false;

  /**
   * Creates the transport; nothing is sent until first use.
   * @param client A postgres.js `Sql` (left open on dispose) or a
   *               connection URL (closed on dispose).
   * @param options The channel prefix.
   * @throws {TypeError} When the client or prefix is malformed.
   */
  constructor(client: Sql | string | URL, options: PostgresPubSubOptions = {}) {
    assertKnownOptions(options, ["prefix"], { where: "new PostgresPubSub()" });
    const prefix = options.prefix ?? "";
    if (typeof prefix !== "string") {
      throw new TypeError("The prefix option of PostgresPubSub must be a string.");
    }
    this.#prefix = prefix;
    ({ sql: this.#sql, ownsClient: this.#ownsClient } = resolveClient(
      client,
      "new PostgresPubSub()",
    ));
  }

  #channel(topic: string): string {
    const channel = this.#prefix + topic;
    if (new TextEncoder().encode(channel).length > MAX_CHANNEL_BYTES) {
      throw new RangeError(
        `The channel ${JSON.stringify(channel)} (prefix and topic) is longer than PostgreSQL's ` +
          `${MAX_CHANNEL_BYTES} bytes; use a shorter prefix.`,
      );
    }
    return channel;
  }

  /**
   * Publishes a payload with `pg_notify()`.
   * @param topic The topic.
   * @param payload The payload, under 8000 bytes.
   * @throws {TypeError} When the topic or payload is malformed.
   * @throws {RangeError} When the channel name is too long.
   * @throws {PostgresClosedError} After disposal.
   */
  async publish(topic: string, payload: string): Promise<void> {
    checkPublication(topic, payload);
    if (this.#closed) throw new PostgresClosedError("PostgresPubSub");
    await this.#sql.notify(this.#channel(topic), payload);
  }

  /**
   * Subscribes with `LISTEN` until `options.signal` aborts; resolves once
   * PostgreSQL has run the `LISTEN`.
   * @param topic The topic.
   * @param listener Called with each payload.
   * @param options The signal.
   * @throws {TypeError} When the topic or listener is malformed.
   * @throws {RangeError} When the channel name is too long.
   * @throws {PostgresClosedError} After disposal.
   */
  async subscribe(
    topic: string,
    listener: (payload: string) => void,
    options: PubSubSubscribeOptions = {},
  ): Promise<void> {
    checkSubscription(topic, listener);
    if (this.#closed) throw new PostgresClosedError("PostgresPubSub");
    const channel = this.#channel(topic);
    const { signal } = options;
    if (signal?.aborted) return;
    const subscription = await this.#sql.listen(channel, (payload) => {
      try {
        listener(payload);
      } catch (error) {
        logger.error("A subscriber of the topic {topic} threw: {error}", { topic, error });
      }
    });
    this.#active.add(subscription);
    const end = () => {
      if (!this.#active.delete(subscription)) return;
      subscription.unlisten().catch((error) => {
        logger.warn("Could not stop listening to {topic}: {error}", { topic, error });
      });
    };
    if (signal == null) return;
    if (signal.aborted) end();
    else signal.addEventListener("abort", end, { once: true });
  }

  /** How many subscriptions are active. */
  get subscriptionCount(): number {
    return this.#active.size;
  }

  /**
   * Ends every subscription and closes the client when it owns it.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const active = [...this.#active];
    this.#active.clear();
    await Promise.all(active.map((subscription) => subscription.unlisten().catch(() => {})));
    if (this.#ownsClient) await this.#sql.end({ timeout: 5 });
  }
}
