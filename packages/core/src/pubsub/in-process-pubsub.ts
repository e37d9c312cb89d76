import type { PubSub, PubSubSubscribeOptions } from "./pubsub.ts";
import { checkPublication, checkSubscription, TopicListeners } from "./topic-listeners.ts";

/** How many subscriptions each transport has, by topic. */
const subscriptionsByTopic = new WeakMap<InProcessPubSub, Map<string, number>>();

/**
 * Tells whether an in-process transport has a subscriber for a topic, so
 * that a publisher can skip building a payload nobody would receive.
 * @param pubsub The transport.
 * @param topic The topic.
 * @returns `true` when the topic has at least one subscription.
 * @since 0.3.0
 */
export function hasInProcessSubscriber(pubsub: InProcessPubSub, topic: string): boolean {
  return (subscriptionsByTopic.get(pubsub)?.get(topic) ?? 0) > 0;
}

/**
 * A {@link PubSub} inside one process: what a federation uses when no
 * `pubsub` option is given.  Payloads are delivered asynchronously (in a
 * later microtask), as a networked transport would, so a publisher never
 * runs subscriber code synchronously.  Use `RedisPubSub`, `PostgresPubSub`
 * or `SqlitePubSub` when workers and watchers run in different processes.
 * @example
 * ```ts
 * import { InProcessPubSub } from "@fedwork/core";
 *
 * const pubsub = new InProcessPubSub();
 * const controller = new AbortController();
 * await pubsub.subscribe("news", (payload) => console.log(payload), {
 *   signal: controller.signal,
 * });
 * await pubsub.publish("news", "hello");
 * controller.abort();
 * ```
 * @since 0.2.0
 */
export class InProcessPubSub implements PubSub {
  readonly #listeners = new TopicListeners();
  readonly #counts = new Map<string, number>();

  /** Creates a transport with no subscriptions. */
  constructor() {
    subscriptionsByTopic.set(this, this.#counts);
  }

  /**
   * Delivers the payload to the topic's current subscribers.
   * @param topic The topic.
   * @param payload The payload.
   * @throws {TypeError} When the topic or payload is not a string.
   */
  publish(topic: string, payload: string): Promise<void> {
    checkPublication(topic, payload);
    queueMicrotask(() => this.#listeners.deliver(topic, payload));
    return Promise.resolve();
  }

  /**
   * Subscribes until `options.signal` aborts.
   * @param topic The topic.
   * @param listener Called with each payload.
   * @param options The signal.
   * @throws {TypeError} When the topic or listener is malformed.
   */
  subscribe(
    topic: string,
    listener: (payload: string) => void,
    options: PubSubSubscribeOptions = {},
  ): Promise<void> {
    checkSubscription(topic, listener);
    const { signal } = options;
    if (signal?.aborted) return Promise.resolve();
    // A wrapper, so that subscribing one function twice makes two
    // subscriptions that end separately.
    const own = (payload: string) => listener(payload);
    this.#listeners.add(topic, own);
    this.#counts.set(topic, (this.#counts.get(topic) ?? 0) + 1);
    signal?.addEventListener("abort", () => {
      this.#listeners.remove(topic, own);
      const left = this.#counts.get(topic)! - 1;
      if (left > 0) this.#counts.set(topic, left);
      else this.#counts.delete(topic);
    }, { once: true });
    return Promise.resolve();
  }

  /** How many subscriptions are active, across topics (for tests and leaks). */
  get subscriptionCount(): number {
    return this.#listeners.count;
  }
}
