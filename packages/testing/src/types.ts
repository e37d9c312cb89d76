import type { KvStore, MessageQueue } from "@fedwork/core";

/**
 * What a backend's *factory module* exports, as named exports
 * (`export function createQueue(...)`, `export async function cleanup(...)`)
 * or as the module's default export.
 *
 * The factory module is a plain `.ts` module, not a `*.test.ts` file; by
 * convention it is `src/testdata/conformance-factory.ts` in the backend's package.
 * {@link testMessageQueue} imports it by URL, both in the test process and
 * in the child process of the crash test, so it must not register tests or
 * depend on state set up by the test file.
 * @since 0.1.0
 */
export interface MessageQueueFactory {
  /**
   * Returns a new queue instance, with its own connections, attached to the
   * queue identified by `namespace`.  Two calls with the same namespace give
   * two instances that share one underlying queue (competing consumers); a
   * different namespace is fully isolated.
   * @param namespace A unique name such as `fedwork-test-3f9a0c1b2d4e`.
   * @param options.leaseMs The visibility or lease timeout the instance must
   *                        use; the suite passes short values such as 1500 so
   *                        that the crash test is quick.  Backends without
   *                        leases ignore it.
   * @param options.prefetch How many messages the instance claims beyond its
   *                         running handlers, when given; the suite passes it
   *                         only with `prefetch: true` (see
   *                         {@link MessageQueueConformanceOptions.prefetch}).
   *                         Otherwise the backend's choice.
   * @returns The queue.
   */
  createQueue(
    namespace: string,
    options: { leaseMs: number; prefetch?: number },
  ): MessageQueue | Promise<MessageQueue>;

  /**
   * Deletes everything stored under `namespace` (tables, keys, queues).
   * Optional.
   * @param namespace The namespace given to {@link createQueue}.
   */
  cleanup?(namespace: string): Promise<void>;
}

/**
 * Options for {@link testMessageQueue}.
 * @since 0.1.0
 */
export interface MessageQueueConformanceOptions {
  /** Used in test names, e.g. `"RedisMessageQueue"`. */
  readonly name: string;

  /**
   * The URL of the factory module (see {@link MessageQueueFactory}),
   * usually `new URL("./testdata/conformance-factory.ts", import.meta.url).href`.
   */
  readonly factoryModule: string;

  /**
   * `true` for durable, multi-process backends: enables the crash test and
   * the lease test.  An in-process queue passes `false`.
   */
  readonly durable: boolean;

  /**
   * `true` when the queue must hand its handlers a `MessageRedelivery`
   * (redelivery in place): the redelivery tests then fail without one.
   * With `false` (the default) they check it only when it is offered.
   * @since 0.2.0
   */
  readonly redelivery?: boolean;

  /**
   * `true` when the queue must deduplicate natively (`nativeDeduplication`
   * with `enqueueDeduplicated()`): the deduplication tests then fail
   * without it.  With `false` (the default) they check it only when it is
   * offered.
   * @since 0.2.0
   */
  readonly deduplication?: boolean;

  /**
   * `true` when the queue claims messages ahead of its handlers (a
   * `prefetch` option, passed through {@link MessageQueueFactory.createQueue}):
   * then prefetched messages must stay leased while the listener runs and be
   * handed back, in order, as soon as it stops.  Needs `getDepth()`.
   * @since 0.2.0
   */
  readonly prefetch?: boolean;

  /**
   * `true` when the queue must order messages by priority
   * (`nativePriority`): the priority tests then fail without it.  With
   * `false` (the default) they check that a queue without it refuses a
   * priority, and check the order only when it is offered.
   * @since 0.3.0
   */
  readonly priority?: boolean;

  /**
   * `true` when the queue hands messages out under leases that run out
   * (a worker that stops renewing its lease loses the message to the next
   * claim), as the SQLite, PostgreSQL and Redis queues do: enables the test
   * that a worker whose lease ran out cannot acknowledge the message
   * another worker has since been handed.  `false` (the default) for
   * queues whose broker binds a delivery to the consumer's connection,
   * such as RabbitMQ.
   * @since 0.3.0
   */
  readonly leases?: boolean;

  /** The lease passed to {@link MessageQueueFactory.createQueue}; 1500 by default. */
  readonly leaseMs?: number;

  /**
   * `true` when the queue counts hand-outs (`MessageRedelivery.deliveryCount`):
   * enables the tests that a handler that throws is handed the message again
   * with the count up, that `redeliver()` resets it, and (durable only) the
   * poison-message test, in which real child processes die handling a
   * message until its count goes over the limit and it is acknowledged
   * unrun, after which the message behind it runs (see `runPoisonTest()`).
   * `false` by default.
   * @since 0.4.0
   */
  readonly deliveryCount?: boolean;

  /**
   * How the poison message kills its worker in the poison-message test:
   * `"sigkill"` (the default) or `"oom"` (runs out of memory under a small
   * heap limit; SIGKILL on Bun).
   * @since 0.4.0
   */
  readonly poisonKill?: "sigkill" | "oom";
}

/**
 * Options for {@link testKvStore}.
 * @since 0.1.0
 */
export interface KvStoreConformanceOptions {
  /** Used in test names, e.g. `"RedisKvStore"`. */
  readonly name: string;

  /**
   * Returns a new store instance isolated under `namespace`.
   * @param namespace A unique name such as `fedwork-test-3f9a0c1b2d4e`.
   * @returns The store.
   */
  createStore(namespace: string): KvStore | Promise<KvStore>;

  /**
   * Whether the store takes a TTL in every `DurationInput` form (a
   * duration-like object such as `{ hours: 1 }`, an ISO 8601 string), as
   * Fedwork's stores do, besides a `Temporal.Duration`.  `true` by default;
   * pass `false` for a store written for Fedify, which takes only a
   * `Temporal.Duration`.
   * @since 0.2.0
   */
  readonly durationInputs?: boolean;

  /**
   * Deletes everything stored under `namespace`.  Optional.
   * @param namespace The namespace given to {@link createStore}.
   */
  cleanup?(namespace: string): Promise<void>;
}

/**
 * Options for {@link testFederationOverQueue}.
 * @since 0.1.0
 */
export interface FederationConformanceOptions {
  /** Used in test names, e.g. `"RedisMessageQueue"`. */
  readonly name: string;

  /**
   * URL of the backend's factory module (the same one given to
   * `testMessageQueue()`).
   */
  readonly factoryModule: string;

  /**
   * `true` when the queue redelivers in place (see
   * `MessageQueueConformanceOptions.redelivery`): the ordering test then
   * checks that a retried task keeps its place in its ordering key.
   * @since 0.2.0
   */
  readonly redelivery?: boolean;

  /** The lease passed to {@link MessageQueueFactory.createQueue}; 1500 by default. */
  readonly leaseMs?: number;

  /**
   * `true` when the queue counts hand-outs (`MessageRedelivery.deliveryCount`):
   * enables the end-to-end poison test, with the worker federation in child
   * processes that an inbox listener kills.  `false` by default.
   * @since 0.4.0
   */
  readonly deliveryCount?: boolean;
}
