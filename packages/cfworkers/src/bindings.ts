// The parts of Cloudflare's binding types this package uses, written out so
// that it needs neither @cloudflare/workers-types nor the declarations
// `wrangler types` generates; both are assignable to these.

/**
 * What {@link WorkersKvNamespace.list} returns for one key.
 * @since 0.3.0
 */
export interface WorkersKvListKey {
  /** The key. */
  readonly name: string;
  /** When Workers KV deletes the key (seconds since the epoch), if it expires. */
  readonly expiration?: number;
  /** The metadata stored with the key, if any. */
  readonly metadata?: unknown;
}

/**
 * One page of {@link WorkersKvNamespace.list}.
 * @since 0.3.0
 */
export interface WorkersKvListResult {
  /** The keys of this page. */
  readonly keys: readonly WorkersKvListKey[];
  /** `true` on the last page. */
  readonly list_complete: boolean;
  /** Where the next page starts, when `list_complete` is `false`. */
  readonly cursor?: string;
}

/**
 * A Workers KV namespace binding (`KVNamespace` in
 * `@cloudflare/workers-types`), as far as {@link WorkersKvStore} uses it.
 * @since 0.3.0
 */
export interface WorkersKvNamespace {
  /** Reads a value with its metadata. */
  getWithMetadata(
    key: string,
    type: "text",
  ): Promise<{ readonly value: string | null; readonly metadata: unknown }>;
  /** Writes a value. */
  put(
    key: string,
    value: string,
    options?: { expirationTtl?: number; metadata?: unknown },
  ): Promise<void>;
  /** Removes a value. */
  delete(key: string): Promise<void>;
  /** Lists keys by prefix, one page at a time. */
  list(
    options?: { prefix?: string | null; cursor?: string | null; limit?: number },
  ): Promise<WorkersKvListResult>;
}

/**
 * One message of {@link WorkersQueue.sendBatch}.
 * @since 0.3.0
 */
export interface WorkersQueueSendRequest {
  /** The message body. */
  // deno-lint-ignore no-explicit-any
  readonly body: any;
  /** How the body is serialized; this package always sends `"json"`. */
  readonly contentType?: "json";
  /** How long the message waits before delivery, in seconds. */
  readonly delaySeconds?: number;
}

/**
 * A Cloudflare Queues producer binding (`Queue` in
 * `@cloudflare/workers-types`), as far as {@link WorkersMessageQueue} uses
 * it.
 * @since 0.3.0
 */
export interface WorkersQueue {
  /** Sends one message. */
  send(
    // deno-lint-ignore no-explicit-any
    body: any,
    options?: { contentType?: "json"; delaySeconds?: number },
  ): Promise<unknown>;
  /** Sends up to 100 messages at once. */
  sendBatch(
    messages: Iterable<WorkersQueueSendRequest>,
    options?: { delaySeconds?: number },
  ): Promise<unknown>;
}

/**
 * One message handed to a Worker's `queue()` handler (`Message` in
 * `@cloudflare/workers-types`).
 * @since 0.3.0
 */
export interface WorkersQueueMessage {
  /** The message id Cloudflare assigned. */
  readonly id: string;
  /** The body, as sent. */
  readonly body: unknown;
  /** How many times the message has been delivered, this time included. */
  readonly attempts: number;
  /** Marks the message handled: it is not delivered again. */
  ack(): void;
  /** Asks for the message to be delivered again, after `delaySeconds`. */
  retry(options?: { delaySeconds?: number }): void;
}

/**
 * The batch a Worker's `queue()` handler receives (`MessageBatch` in
 * `@cloudflare/workers-types`).
 * @since 0.3.0
 */
export interface WorkersMessageBatch {
  /** The queue's name. */
  readonly queue: string;
  /** The messages. */
  readonly messages: readonly WorkersQueueMessage[];
}

/**
 * What {@link WorkersD1PreparedStatement.run} resolves to, as far as
 * {@link D1KvStore} reads it.
 * @since 0.3.0
 */
export interface WorkersD1RunResult {
  /** What the statement did. */
  readonly meta: {
    /** How many rows it changed. */
    readonly changes: number;
  };
}

/**
 * A prepared D1 statement (`D1PreparedStatement` in
 * `@cloudflare/workers-types`), as far as {@link D1KvStore} uses it.
 * @since 0.3.0
 */
export interface WorkersD1PreparedStatement {
  /** Binds the `?` parameters, in order. */
  bind(...values: unknown[]): WorkersD1PreparedStatement;
  /** The first row, or `null`. */
  first<T = Record<string, unknown>>(): Promise<T | null>;
  /** Every row. */
  all<T = Record<string, unknown>>(): Promise<{ readonly results: T[] }>;
  /** Runs the statement. */
  run(): Promise<WorkersD1RunResult>;
}

/**
 * A D1 database binding (`D1Database` in `@cloudflare/workers-types`), as
 * far as {@link D1KvStore} uses it.
 * @since 0.3.0
 */
export interface WorkersD1Database {
  /** Prepares a statement. */
  prepare(query: string): WorkersD1PreparedStatement;
  /**
   * Runs statements in one round trip, as one transaction.  Optional, so
   * that a stand-in without it still fits; `D1Database` has it.
   */
  batch?(statements: WorkersD1PreparedStatement[]): Promise<unknown[]>;
}
