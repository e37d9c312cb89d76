import { trace, type TracerProvider } from "@opentelemetry/api";
import type { DocumentLoader } from "@fedify/vocab";
import type { KvStore } from "../kv/kv-store.ts";
import { withTemporalTtl } from "../kv/temporal-ttl.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { createExponentialBackoffPolicy } from "../retry/mod.ts";
import { createFetchDocumentLoader } from "./document-loader.ts";
import { FederationOptionError } from "./errors.ts";
import { assertKnownOptions } from "./option-names.ts";
import {
  DEFAULT_USER_AGENT,
  type DocumentLoaderFactory,
  type FederationOrigin,
  resolveDocumentLoaderFactory,
  resolveOrigin,
  resolveUserAgent,
  type UserAgentOptions,
} from "./option-forms.ts";
import {
  type FederationQueueOptions,
  isMessageQueue,
  QUEUE_ROLES,
  type QueueRole,
} from "./queue-roles.ts";

export { DEFAULT_USER_AGENT };

/**
 * Options for {@link createFederation} and `FederationBuilder.build()`.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface FederationOptions<TContextData> {
  /** The key–value store for caches and deduplication records.  Required. */
  readonly kv: KvStore;

  /**
   * The message queue: one queue for every role, or a queue per role.  When
   * absent, activities are delivered and received in the request.
   */
  readonly queue?: MessageQueue | FederationQueueOptions;

  /**
   * When `true`, workers start only when you call
   * `Federation.startQueue()` (e.g. in a separate worker process).  When
   * `false` (the default), they start on the first enqueue through a
   * context, with that context's data.
   */
  readonly manuallyStartQueue?: boolean;

  /**
   * The canonical origin (`https://example.com`) used for the URIs a
   * context builds, overriding the origin of the request or base URL.
   * Fedify's form `{ handleHost, webOrigin }` is accepted when `handleHost`
   * is `webOrigin`'s host.
   */
  readonly origin?: string | URL | FederationOrigin;

  /** The retry policy for received activities; exponential backoff by default. */
  readonly inboxRetryPolicy?: RetryPolicy;
  /** The retry policy for deliveries; exponential backoff by default. */
  readonly outboxRetryPolicy?: RetryPolicy;
  /** The default retry policy for tasks; exponential backoff by default. */
  readonly taskRetryPolicy?: RetryPolicy;

  /**
   * Whether tasks without a queue of their own fall back to the outbox
   * queue when no task queue is configured (`"fallback"`, the default) or
   * fail to enqueue (`"strict"`).
   */
  readonly taskQueueResolution?: "fallback" | "strict";

  /**
   * Loads remote JSON-LD documents.  A `fetch`-based loader honouring
   * `userAgent` and `allowPrivateAddress` by default.
   */
  readonly documentLoader?: DocumentLoader;

  /**
   * Makes the document loader, as in Fedify: called once with the resolved
   * `allowPrivateAddress` and `userAgent`.  Give this or `documentLoader`,
   * not both.
   * @since 0.2.0
   */
  readonly documentLoaderFactory?: DocumentLoaderFactory;

  /**
   * Not supported: Fedwork loads JSON-LD contexts with its document loader
   * (the well-known contexts are bundled), so passing this throws a
   * {@link FederationOptionError} pointing to `documentLoaderFactory`.
   * Typed only so that Fedify's options type-check while you move.
   * @deprecated Use `documentLoaderFactory` or `documentLoader`.
   * @since 0.2.0
   */
  readonly contextLoaderFactory?: DocumentLoaderFactory;

  /**
   * The `User-Agent` header of outgoing requests, or Fedify's
   * `{ software, url }` form; {@link DEFAULT_USER_AGENT} by default.
   */
  readonly userAgent?: string | UserAgentOptions;

  /**
   * Whether outgoing requests may go to loopback and private addresses.
   * `false` by default; set it to `true` only in tests and development.
   */
  readonly allowPrivateAddress?: boolean;

  /** The OpenTelemetry tracer provider; the global one by default. */
  readonly tracerProvider?: TracerProvider;
}

/**
 * Every option's name, typed so that adding an option to
 * {@link FederationOptions} without listing it here fails to compile.
 * `contextLoaderFactory` is left out: it is typed for Fedify's sake but
 * refused with advice (see `option-names.ts`).
 */
const OPTION_NAMES: Record<
  Exclude<keyof FederationOptions<unknown>, "contextLoaderFactory">,
  true
> = {
  kv: true,
  queue: true,
  manuallyStartQueue: true,
  origin: true,
  inboxRetryPolicy: true,
  outboxRetryPolicy: true,
  taskRetryPolicy: true,
  taskQueueResolution: true,
  documentLoader: true,
  documentLoaderFactory: true,
  userAgent: true,
  allowPrivateAddress: true,
  tracerProvider: true,
};

/**
 * {@link FederationOptions} after validation, with defaults filled in.
 * @since 0.1.0
 */
export interface ResolvedFederationOptions {
  readonly kv: KvStore;
  /** The queue of each role that has one. */
  readonly queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>;
  readonly manuallyStartQueue: boolean;
  /** The canonical origin, e.g. `https://example.com`, if set. */
  readonly origin?: string;
  readonly inboxRetryPolicy: RetryPolicy;
  readonly outboxRetryPolicy: RetryPolicy;
  readonly taskRetryPolicy: RetryPolicy;
  readonly taskQueueResolution: "fallback" | "strict";
  readonly documentLoader: DocumentLoader;
  readonly userAgent: string;
  readonly allowPrivateAddress: boolean;
  readonly tracerProvider: TracerProvider;
}

/**
 * Validates federation options and fills in the defaults.
 * @param options The options.
 * @returns The resolved options.
 * @throws {FederationOptionError} When an option is missing or invalid; the
 *         message names the option.
 * @since 0.1.0
 */
export function resolveFederationOptions<TContextData>(
  options: FederationOptions<TContextData>,
): ResolvedFederationOptions {
  if (typeof options !== "object" || options == null) {
    throw new FederationOptionError("options", "The federation options must be an object.");
  }
  assertKnownOptions(options, Object.keys(OPTION_NAMES));
  const { kv } = options;
  if (kv == null) {
    throw new FederationOptionError("kv", "The kv option is required: pass a KvStore.");
  }
  if (
    typeof kv !== "object" || typeof kv.get !== "function" || typeof kv.set !== "function" ||
    typeof kv.delete !== "function"
  ) {
    throw new FederationOptionError(
      "kv",
      "The kv option must be a KvStore (an object with get, set and delete methods).",
    );
  }
  const queues = resolveQueues(options.queue);
  const manuallyStartQueue = options.manuallyStartQueue ?? false;
  if (typeof manuallyStartQueue !== "boolean") {
    throw new FederationOptionError(
      "manuallyStartQueue",
      "The manuallyStartQueue option must be a boolean.",
    );
  }
  const allowPrivateAddress = options.allowPrivateAddress ?? false;
  if (typeof allowPrivateAddress !== "boolean") {
    throw new FederationOptionError(
      "allowPrivateAddress",
      "The allowPrivateAddress option must be a boolean.",
    );
  }
  const userAgent = resolveUserAgent(options.userAgent);
  const taskQueueResolution = options.taskQueueResolution ?? "fallback";
  if (taskQueueResolution !== "fallback" && taskQueueResolution !== "strict") {
    throw new FederationOptionError(
      "taskQueueResolution",
      `The taskQueueResolution option must be "fallback" or "strict"; got ${
        JSON.stringify(taskQueueResolution)
      }.`,
    );
  }
  if (options.documentLoader != null && typeof options.documentLoader !== "function") {
    throw new FederationOptionError(
      "documentLoader",
      "The documentLoader option must be a function (url) => Promise<RemoteDocument>.",
    );
  }
  const documentLoader =
    resolveDocumentLoaderFactory(options, { allowPrivateAddress, userAgent }) ??
      options.documentLoader ??
      createFetchDocumentLoader({ userAgent, allowPrivateAddress });
  const tracerProvider = options.tracerProvider ?? trace.getTracerProvider();
  if (typeof tracerProvider?.getTracer !== "function") {
    throw new FederationOptionError(
      "tracerProvider",
      "The tracerProvider option must be an OpenTelemetry TracerProvider.",
    );
  }
  return {
    // Parts of Fedwork that write to the store may give a TTL in any form;
    // the store gets a Temporal.Duration, the form Fedify's stores expect.
    kv: withTemporalTtl(kv),
    queues,
    manuallyStartQueue,
    origin: resolveOrigin(options.origin),
    inboxRetryPolicy: resolveRetryPolicy("inboxRetryPolicy", options.inboxRetryPolicy),
    outboxRetryPolicy: resolveRetryPolicy("outboxRetryPolicy", options.outboxRetryPolicy),
    taskRetryPolicy: resolveRetryPolicy("taskRetryPolicy", options.taskRetryPolicy),
    taskQueueResolution,
    documentLoader,
    userAgent,
    allowPrivateAddress,
    tracerProvider,
  };
}

function resolveQueues(
  queue: MessageQueue | FederationQueueOptions | undefined,
): Partial<Record<QueueRole, MessageQueue>> {
  if (queue == null) return {};
  if (isMessageQueue(queue)) {
    return Object.fromEntries(QUEUE_ROLES.map((role) => [role, queue]));
  }
  if (typeof queue !== "object") {
    throw new FederationOptionError(
      "queue",
      "The queue option must be a MessageQueue or an object of MessageQueues " +
        "({ inbox, outbox, fanout, task }).",
    );
  }
  const queues: Partial<Record<QueueRole, MessageQueue>> = {};
  for (const key of Object.keys(queue)) {
    if (!(QUEUE_ROLES as readonly string[]).includes(key)) {
      throw new FederationOptionError(
        `queue.${key}`,
        `Unknown queue role queue.${key}; the roles are ${QUEUE_ROLES.join(", ")}.`,
      );
    }
  }
  for (const role of QUEUE_ROLES) {
    const roleQueue = (queue as FederationQueueOptions)[role];
    if (roleQueue == null) continue;
    if (!isMessageQueue(roleQueue)) {
      throw new FederationOptionError(
        `queue.${role}`,
        `The queue.${role} option must be a MessageQueue (with enqueue and listen methods).`,
      );
    }
    queues[role] = roleQueue;
  }
  return queues;
}

function resolveRetryPolicy(name: string, policy: RetryPolicy | undefined): RetryPolicy {
  if (policy == null) return createExponentialBackoffPolicy();
  if (typeof policy !== "function") {
    throw new FederationOptionError(
      name,
      `The ${name} option must be a retry policy function, e.g. createExponentialBackoffPolicy().`,
    );
  }
  return policy;
}
