import type { PubSub } from "@fedwork/core";
import {
  assertKnownOptions,
  checkPublication,
  checkSubscription,
  TopicListeners,
} from "@fedwork/core/queue-kit";
import type { PubSubSubscribeOptions } from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import { checkPrefix } from "./options.ts";
import type { Cluster } from "ioredis";
import {
  type RedisClient,
  type RedisConnectionOptions,
  RedisConnectionSource,
} from "./connection.ts";

const logger = getLogger(["fedwork", "redis"]);

/**
 * The connection to publish `channel` through.  On a Redis Cluster, ioredis
 * sends a command without a key, such as `PUBLISH`, to a random node, and
 * the other nodes' subscribers get it over the cluster bus: two payloads of
 * one channel published through two nodes can arrive out of order (a task's
 * last progress after its `completed`).  So each channel is published
 * through one master, chosen from the channel's name among the masters
 * sorted by address; on a single server, the client itself.
 */
function publisherOf(client: RedisClient, channel: string): RedisClient {
  if (client.isCluster !== true) return client;
  const masters = (client as Cluster).nodes("master");
  if (masters.length === 0) return client;
  const address = (node: (typeof masters)[number]) => `${node.options.host}:${node.options.port}`;
  const sorted = [...masters].sort((a, b) => address(a) < address(b) ? -1 : 1);
  let hash = 0;
  for (let i = 0; i < channel.length; i++) hash = (hash * 31 + channel.charCodeAt(i)) >>> 0;
  return sorted[hash % sorted.length];
}

/**
 * Options for {@link RedisPubSub}: how to connect (exactly one of
 * `client`, `createClient`, `url` or `redisOptions`) and a channel prefix.
 * @since 0.2.0
 */
export interface RedisPubSubOptions extends RedisConnectionOptions {
  /**
   * Put, with a colon, before every topic to make the Redis channel name,
   * so that several applications can share one Redis: the same rule as
   * the queue's and the KV store's `prefix`, without a trailing colon
   * (refused).  `"fedwork"` by default (the task updates topic becomes
   * `fedwork:fedwork:task-updates`).
   */
  readonly prefix?: string;
}

/**
 * A {@link PubSub} on Redis `PUBLISH`/`SUBSCRIBE`, through ioredis: what
 * carries task progress and state changes between processes that share a
 * Redis server.  Publishing uses the command connection; subscriptions
 * share one more connection in subscriber mode, opened on the first
 * subscription and closed when the last one ends.  Delivery is
 * best effort, as with Redis pub/sub itself: a payload published while the
 * subscriber connection is down is lost (the status record in the
 * key–value store still has the latest state).
 *
 * @example
 * ```ts ignore
 * import { RedisPubSub } from "@fedwork/redis";
 *
 * const pubsub = new RedisPubSub({ url: "redis://127.0.0.1:6379" });
 * const federation = createFederation({ kv, queue, pubsub });
 * ```
 * @since 0.2.0
 */
export class RedisPubSub implements PubSub, AsyncDisposable {
  readonly #connections: RedisConnectionSource;
  readonly #prefix: string;
  readonly #listeners = new TopicListeners();
  #subscriber: RedisClient | undefined;
  /** The last SUBSCRIBE/UNSUBSCRIBE sent, so that they apply in order. */
  #pending: Promise<unknown> = Promise.resolve();
  /**
   * On a cluster, settles once the client knows the masters: every publish
   * waits on it, so the first payloads too go through their channel's one
   * master, and publishes leave in the order they were called.
   */
  #mastersKnown: Promise<void> | undefined;
  #closed = false;

  /**
   * Creates the transport; connections open on first use.
   * @param options How to connect, and the channel prefix.
   * @throws {TypeError} When not exactly one way to connect is given, or
   *                     the prefix is not a string.
   */
  constructor(options: RedisPubSubOptions) {
    assertKnownOptions(options, ["client", "createClient", "url", "redisOptions", "prefix"], {
      where: "new RedisPubSub()",
    });
    this.#connections = new RedisConnectionSource(options, "RedisPubSub");
    this.#prefix = `${checkPrefix(options.prefix, "new RedisPubSub()")}:`;
  }

  /**
   * Publishes a payload with `PUBLISH`.
   * @param topic The topic.
   * @param payload The payload.
   * @throws {TypeError} When the topic or payload is malformed, or the
   *                     transport was disposed.
   */
  async publish(topic: string, payload: string): Promise<void> {
    checkPublication(topic, payload);
    this.#checkOpen();
    const channel = this.#prefix + topic;
    const main = this.#connections.main;
    if (main.isCluster === true) {
      // A first command makes ioredis load the cluster's slots and nodes.
      this.#mastersKnown ??= (main as Cluster).ping().then(() => {}, (error) => {
        this.#mastersKnown = undefined;
        throw error;
      });
      await this.#mastersKnown;
    }
    await publisherOf(main, channel).publish(channel, payload);
  }

  /**
   * Subscribes until `options.signal` aborts; resolves once Redis has
   * confirmed the subscription.
   * @param topic The topic.
   * @param listener Called with each payload.
   * @param options The signal.
   * @throws {TypeError} When the topic or listener is malformed, or the
   *                     transport was disposed.
   */
  async subscribe(
    topic: string,
    listener: (payload: string) => void,
    options: PubSubSubscribeOptions = {},
  ): Promise<void> {
    checkSubscription(topic, listener);
    this.#checkOpen();
    const { signal } = options;
    if (signal?.aborted) return;
    const own = (payload: string) => listener(payload);
    const first = this.#listeners.add(topic, own);
    signal?.addEventListener("abort", () => {
      if (this.#listeners.remove(topic, own)) this.#unsubscribe(topic);
    }, { once: true });
    if (first) {
      const subscriber = this.#subscriberConnection();
      const done = this.#pending.then(() => subscriber.subscribe(this.#prefix + topic));
      this.#pending = done.catch(() => {});
      try {
        await done;
      } catch (error) {
        this.#listeners.remove(topic, own);
        throw error;
      }
    } else {
      // Wait until the topic's first subscription is confirmed.
      await this.#pending;
    }
  }

  #unsubscribe(topic: string): void {
    const subscriber = this.#subscriber;
    if (subscriber == null) return;
    const done = this.#pending.then(async () => {
      // Subscribed again meanwhile: keep the channel.
      if (this.#listeners.topics.includes(topic)) return;
      await subscriber.unsubscribe(this.#prefix + topic);
      if (this.#listeners.count === 0 && this.#subscriber === subscriber) {
        this.#subscriber = undefined;
        await this.#connections.close(subscriber);
      }
    });
    this.#pending = done.catch((error) => {
      logger.warn("Could not unsubscribe from {topic}: {error}", { topic, error });
    });
  }

  #subscriberConnection(): RedisClient {
    if (this.#subscriber != null) return this.#subscriber;
    const subscriber = this.#connections.open();
    subscriber.on("message", (channel: string, payload: string) => {
      if (!channel.startsWith(this.#prefix)) return;
      this.#listeners.deliver(channel.slice(this.#prefix.length), payload);
    });
    this.#subscriber = subscriber;
    return subscriber;
  }

  #checkOpen(): void {
    if (this.#closed) throw new TypeError("The RedisPubSub was disposed of.");
  }

  /** How many subscriptions are active, across topics. */
  get subscriptionCount(): number {
    return this.#listeners.count;
  }

  /**
   * Closes the connections it opened; a passed-in `client` stays open.
   * Active subscriptions end without notice.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pending;
    this.#subscriber = undefined;
    await this.#connections.closeAll();
  }
}
