import { getLogger } from "@logtape/logtape";

const logger = getLogger(["fedwork", "pubsub"]);

/**
 * The listeners of each topic, for {@link PubSub} implementations: adding
 * tells whether the topic got its first listener (so the transport
 * subscribes), removing whether it lost its last one (so it unsubscribes).
 * @since 0.2.0
 */
export class TopicListeners {
  readonly #topics = new Map<string, Set<(payload: string) => void>>();

  /** The topics that have listeners. */
  get topics(): string[] {
    return [...this.#topics.keys()];
  }

  /** How many listeners there are, across topics. */
  get count(): number {
    let count = 0;
    for (const set of this.#topics.values()) count += set.size;
    return count;
  }

  /**
   * Adds a listener.
   * @param topic The topic.
   * @param listener The listener.
   * @returns Whether it is the topic's first listener.
   */
  add(topic: string, listener: (payload: string) => void): boolean {
    let set = this.#topics.get(topic);
    const first = set == null;
    if (set == null) this.#topics.set(topic, set = new Set());
    set.add(listener);
    return first;
  }

  /**
   * Removes a listener.
   * @param topic The topic.
   * @param listener The listener.
   * @returns Whether the topic has no listener left.
   */
  remove(topic: string, listener: (payload: string) => void): boolean {
    const set = this.#topics.get(topic);
    if (set == null || !set.delete(listener)) return false;
    if (set.size > 0) return false;
    this.#topics.delete(topic);
    return true;
  }

  /**
   * Calls the topic's listeners with a payload; a listener that throws is
   * logged.
   * @param topic The topic.
   * @param payload The payload.
   */
  deliver(topic: string, payload: string): void {
    const set = this.#topics.get(topic);
    if (set == null) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        logger.error("A subscriber of the topic {topic} threw: {error}", { topic, error });
      }
    }
  }
}

/**
 * Checks the arguments of {@link PubSub.subscribe} the same way for every
 * transport.
 * @param topic The topic.
 * @param listener The listener.
 * @throws {TypeError} When the topic is not a non-empty string or the
 *         listener not a function.
 * @since 0.2.0
 */
export function checkSubscription(topic: unknown, listener: unknown): void {
  if (typeof topic !== "string" || topic === "") {
    throw new TypeError("The topic of a subscription must be a non-empty string.");
  }
  if (typeof listener !== "function") {
    throw new TypeError("The listener of a subscription must be a function.");
  }
}

/**
 * Checks the arguments of {@link PubSub.publish}.
 * @param topic The topic.
 * @param payload The payload.
 * @throws {TypeError} When the topic is not a non-empty string or the
 *         payload not a string.
 * @since 0.2.0
 */
export function checkPublication(topic: unknown, payload: unknown): void {
  if (typeof topic !== "string" || topic === "") {
    throw new TypeError("The topic of a publication must be a non-empty string.");
  }
  if (typeof payload !== "string") {
    throw new TypeError("The payload of a publication must be a string.");
  }
}
