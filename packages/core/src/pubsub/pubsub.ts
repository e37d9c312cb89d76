/**
 * Options for {@link PubSub.subscribe}.
 * @since 0.2.0
 */
export interface PubSubSubscribeOptions {
  /** Aborting it ends the subscription; an aborted signal subscribes nothing. */
  readonly signal?: AbortSignal;
}

/**
 * A publish/subscribe transport for short string payloads: what carries task
 * progress and state changes from the worker that runs a task to whoever
 * watches it, possibly in another process.  Delivery is best effort (fire
 * and forget): a subscriber that is not connected when a payload is
 * published does not get it, so durable state belongs in the key–value
 * store and the transport only says that it changed.
 *
 * Fedwork ships {@link InProcessPubSub} (one process), `RedisPubSub`
 * (`@fedwork/redis`, Redis `PUBLISH`/`SUBSCRIBE`), `PostgresPubSub`
 * (`@fedwork/postgres`, `LISTEN`/`NOTIFY`) and, since 0.4.0,
 * `SqlitePubSub` (`@fedwork/sqlite`, for processes sharing a SQLite file).
 * @since 0.2.0
 */
export interface PubSub {
  /**
   * Publishes one payload on a topic to every current subscriber, in every
   * process sharing the transport.  Resolves once the transport took it.
   * @param topic The topic.
   * @param payload The payload.
   */
  publish(topic: string, payload: string): Promise<void>;

  /**
   * Calls `listener` with each payload published on `topic` until
   * `options.signal` aborts.  Resolves once the subscription is active:
   * payloads published after that are delivered.
   * @param topic The topic.
   * @param listener Called with each payload; an exception it throws is
   *                 logged by the transport and ignored.
   * @param options The signal that ends the subscription.
   */
  subscribe(
    topic: string,
    listener: (payload: string) => void,
    options?: PubSubSubscribeOptions,
  ): Promise<void>;
}
