import {
  type HostPolicyOptions,
  type ResolvedHostPolicy,
  resolveHostPolicy,
} from "../activitypub/host-policy/options.ts";
import { trace, type TracerProvider } from "@opentelemetry/api";
import { checkMachineId } from "../operator/workers/machine-id.ts";
import type { Activity, DocumentLoader } from "@fedify/vocab";
import { activityTypeIdOf } from "../tasks/steps/activities.ts";
import type { ActivityType } from "../tasks/steps/types.ts";
import type { KvStore } from "../kv/kv-store.ts";
import { withTemporalTtl } from "../kv/temporal-ttl.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { createExponentialBackoffPolicy } from "../retry/mod.ts";
import { createFetchDocumentLoader } from "../activitypub/network/document-loader.ts";
import { withDocumentLimits } from "../activitypub/network/document-budget.ts";
import {
  type FederationRemoteDocumentOptions,
  type ResolvedRemoteDocumentOptions,
  resolveRemoteDocumentOptions,
} from "../activitypub/network/remote-document-options.ts";
import type { HttpSignatureSpec } from "../activitypub/signatures/spec.ts";
import { DEFAULT_MAX_INBOX_BODY_SIZE } from "../activitypub/inbox/verify.ts";
import { DEFAULT_PROOF_MAX_AGE } from "../activitypub/proofs/created-time.ts";
import {
  checkInboxChallengePolicy,
  type InboxChallengePolicy,
} from "../activitypub/inbox/challenge.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import { FederationOptionError } from "./errors.ts";
import { type FederationKvPrefixes, resolveKvPrefixes } from "./kv-prefixes.ts";
import { withKeyPrefixes } from "../kv/key-prefixes.ts";
import {
  type FanoutDeliveriesOptions,
  type ResolvedFanoutDeliveries,
  resolveFanoutDeliveries,
} from "../activitypub/outbox/fanout.ts";
import { assertKnownOptions } from "../options/known-options.ts";
import { FEDIFY_ONLY_OPTION_HINTS } from "../options/federation-option-names.ts";
import {
  DEFAULT_USER_AGENT,
  type DocumentLoaderFactory,
  type FederationOrigin,
  resolveDocumentLoaderFactory,
  resolveHandleHost,
  resolveOrigin,
  resolveUserAgent,
  type UserAgentOptions,
} from "./option-forms.ts";
import {
  type FederationOperationsOptions,
  type ResolvedFederationOperationsOptions,
  resolveFederationOperationsOptions,
} from "../operator/records/options.ts";
import {
  type FederationHostHealthOptions,
  type ResolvedHostHealthOptions,
  resolveHostHealthOptions,
} from "../operator/host-health/options.ts";
import {
  type FederationRemoteRequestOptions,
  type ResolvedRemoteRequestOptions,
  resolveRemoteRequestOptions,
} from "../activitypub/network/remote-request-options.ts";
import {
  type FederationWebhookOptions,
  type ResolvedWebhookOptions,
  resolveWebhookOptions,
} from "../operator/webhooks/options.ts";
import {
  type FederationDeliveryLimitOptions,
  resolveDeliveryLimitOptions,
} from "../processing/delivery-limit.ts";
import {
  type FederationTimeoutOptions,
  type ResolvedTimeoutOptions,
  resolveTimeoutOptions,
} from "../processing/timeout-options.ts";
import {
  type FederationQueueOptions,
  isMessageQueue,
  QUEUE_ROLES,
  type QueueRole,
  queuesOfOneQueue,
} from "../processing/queue-roles.ts";

export { DEFAULT_USER_AGENT };

/**
 * Options for {@link createFederation} and `FederationBuilder.build()`.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface FederationOptions<TContextData>
  extends FederationOperationsOptions, FederationTimeoutOptions, FederationDeliveryLimitOptions {
  /** The key–value store for caches and deduplication records.  Required. */
  readonly kv: KvStore;

  /**
   * The message queue: one queue for every role, or a queue per role.  When
   * absent, activities are delivered and received in the request.  One
   * queue that sets `separateRoles` (`SqliteMessageQueue` does) gives the
   * outbox, fan-out and task roles siblings of their own, each listened to
   * apart (since 0.4.0).
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
   * The id of the machine this process runs on: `listWorkers()` shows it
   * for each worker this federation starts (`groupWorkersByMachine()`
   * groups by it), and the task updates and webhook payloads of the tasks
   * they run carry it.  A non-empty string of at most 256 characters, e.g.
   * a pod's or a VM's name; `startQueue({ machineId })` overrides it per
   * worker.  Read where it is needed: on a runtime without `node:os`
   * (Cloudflare Workers) and without this option, it is `"unknown"`.
   * @default The host name (`os.hostname()`).
   * @since 0.4.0
   */
  readonly machineId?: string;

  /**
   * The canonical origin (`https://example.com`) used for the URIs a
   * context builds, overriding the origin of the request or base URL.
   * Fedify's form `{ handleHost, webOrigin }` puts fediverse handles on
   * `handleHost` (e.g. `@alice@example.com`) and URIs on `webOrigin` (e.g.
   * `https://ap.example.com`); the hosts may differ since 0.3.0.
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

  /**
   * The limits every request to another server keeps: a total time limit
   * (`timeout`, 10 seconds; `deliveryTimeout`, 15 seconds for a delivery
   * POST), a response body cap (`maxBodyBytes`, 1 MiB) and `maxRedirects`
   * (5).  See the manual's security page.
   * @since 0.3.0
   */
  readonly remoteRequests?: FederationRemoteRequestOptions;

  /**
   * The limits every document from another server (inbox activities,
   * actors, keys, objects, collection pages, JSON-LD contexts) is held to
   * before any JSON-LD processing: `@context` entries (64), inline context
   * terms (1,024), the context work they ask for (100,000), nesting depth
   * (64), JSON values (5,000), string length (512 Ki), and what parsing one
   * document may load (`maxLoads`, 8, within `loadTimeout`, 10 seconds, all
   * together).  A document past a limit is refused before any JSON-LD work:
   * 400 at an inbox, `null` from a lookup.  See the manual's security page.
   * @since 0.4.0
   */
  readonly remoteDocuments?: FederationRemoteDocumentOptions;

  /** The OpenTelemetry tracer provider; the global one by default. */
  readonly tracerProvider?: TracerProvider;

  // --- ActivityPub over HTTP (signatures, inbox, delivery), since 0.2.0 ---

  /**
   * How far from now an incoming request's signature may have been made,
   * in either direction, or `false` not to check (tests with fixed
   * requests only).
   * @default `{ hours: 1 }`
   * @since 0.2.0
   */
  readonly signatureTimeWindow?: DurationInput | false;

  /**
   * The oldest Object Integrity Proof or Linked Data signature an inbox
   * accepts to vouch for an activity delivered by someone else than its
   * actor (a forwarded reply), by its `created`; one made further in the
   * future than `signatureTimeWindow` is refused as well.  `false` not to
   * check age, as Mastodon does not for Linked Data signatures.  Forwarded
   * activities are hours old, rarely days; an older one is most likely a
   * replay of something its author has since deleted or edited.
   * @default `{ days: 7 }`
   * @since 0.4.0
   */
  readonly proofMaxAge?: DurationInput | false;

  /**
   * Whether inboxes accept activities without verifying their HTTP
   * signatures.  Never in production: anyone could then post anything on
   * anyone's behalf.
   * @default `false`
   * @since 0.2.0
   */
  readonly skipSignatureVerification?: boolean;

  /**
   * Whether an inbox's 401 for a failed HTTP signature carries an
   * `Accept-Signature` challenge (RFC 9421 §5) saying how to sign, with an
   * optional one-time nonce; Fedify's option of the same name and shape.
   * @default no challenge
   * @since 0.3.0
   */
  readonly inboxChallengePolicy?: InboxChallengePolicy;

  /**
   * The HTTP signature scheme a delivery tries first with a server whose
   * accepted scheme is not yet known; on a 4xx or 5xx the other is tried
   * once (the double knock), and the one that worked is remembered.
   * @default `"rfc9421"`
   * @since 0.2.0
   */
  readonly firstKnock?: HttpSignatureSpec;

  /**
   * The statuses after which a delivery is never retried; the
   * `setOutboxPermanentFailureHandler()` handler is called once instead.
   * @default `[404, 410]`
   * @since 0.2.0
   */
  readonly permanentFailureStatusCodes?: readonly number[];

  /**
   * How long the id of a received activity is remembered to skip it when it
   * comes again (see `withIdempotency()`).
   * @default `{ days: 1 }`
   * @since 0.2.0
   */
  readonly inboxIdempotencyTtl?: DurationInput;

  /**
   * The largest inbox request body accepted, in bytes; a larger one is
   * answered 413 without being read past the limit, with or without
   * `skipSignatureVerification`.  A positive integer.
   * @default `1048576` (1 MiB, `DEFAULT_MAX_INBOX_BODY_SIZE`)
   * @since 0.3.0
   */
  readonly inboxMaxBytes?: number;

  // --- Operator features (webhooks, remote-server health), since 0.2.0 ---

  /**
   * How webhooks (`addWebhook()`) are sent: when one is disabled, the
   * request timeout, the retry policy.
   * @default `{ disableAfterFailures: 10, timeout: { seconds: 10 } }`
   * @since 0.2.0
   */
  readonly webhooks?: FederationWebhookOptions;

  /**
   * Remote-server health for delivery: hosts that failed
   * `failureThreshold` deliveries in a row get their deliveries parked
   * (not retried) and are probed with growing delays until they answer.
   * Needs an outbox queue and a KvStore with `list()` (and preferably
   * `cas()`).  Off by default; `{}` turns it on with the defaults.
   * @default `false`
   * @since 0.2.0
   */
  readonly hostHealth?: FederationHostHealthOptions | false;

  /**
   * Lets the fan-out worker make the first attempt of a fan-out's
   * deliveries itself, `concurrency` at once for up to `budget`, and
   * enqueue only the rest and the retries into the outbox queue.  See
   * {@link FanoutDeliveriesOptions} for what that changes.  Needs an outbox
   * queue.  Off by default.
   * @default `false`
   * @since 0.3.0
   */
  readonly fanoutDeliveries?: FanoutDeliveriesOptions | false;

  /**
   * What deliveries and the inbox do with particular remote hosts:
   * `block` refuses hosts and domains (no request is sent to them, and
   * their activities are answered 403), and `retryAfter` makes deliveries
   * to a host that answered 429 or 503 with `Retry-After` wait that long,
   * up to a limit, without spending attempts.  See
   * {@link HostPolicyOptions}.  Off by default: `{}` honours `Retry-After`
   * with the defaults and blocks nothing.
   * @default `false`
   * @since 0.4.0
   */
  readonly hostPolicy?: HostPolicyOptions | false;
  /**
   * The activity classes tasks wait for with `ctx.step.waitForActivity()`,
   * e.g. `[Accept]`: the inbox keeps every verified activity of these
   * classes (and their subclasses) for the event window, so that a wait
   * that starts after its activity arrived (an `Accept` that comes while
   * the task is between the step that sent the `Follow` and its wait)
   * finds it.  Activities of other classes cost the inbox nothing unless
   * a wait for their class has started in the federation: then they are
   * kept too, from about a second after the first such wait, but one that
   * arrived before is lost.  Declare them in every process that runs the
   * inbox.  None by default.
   * @default `[]`
   * @since 0.4.0
   */
  readonly waitedActivities?: readonly ActivityType<Activity>[];
  /**
   * Where the federation keeps its records in the `kv` store, Fedify's
   * option: any of {@link FederationKvPrefixes}, e.g.
   * `{ activityIdempotence: ["myapp", "idempotence"] }`, to share one store
   * between apps.  Keys under each default prefix are stored under the
   * given one instead; no two prefixes may overlap.
   * @default Fedwork's prefixes (see {@link FederationKvPrefixes})
   * @since 0.4.0
   */
  readonly kvPrefixes?: Partial<FederationKvPrefixes>;
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
  machineId: true,
  origin: true,
  inboxRetryPolicy: true,
  outboxRetryPolicy: true,
  taskRetryPolicy: true,
  taskTimeout: true,
  inboxTimeout: true,
  outboxTimeout: true,
  timeoutGracePeriod: true,
  maxDeliveries: true,
  taskQueueResolution: true,
  documentLoader: true,
  documentLoaderFactory: true,
  userAgent: true,
  allowPrivateAddress: true,
  remoteRequests: true,
  remoteDocuments: true,
  tracerProvider: true,
  meterProvider: true,
  taskDeduplicationTtl: true,
  failedTaskRetention: true,
  keepFailedDeliveries: true,
  completedTaskRetention: true,
  taskStatusRetention: true,
  pubsub: true,
  signatureTimeWindow: true,
  proofMaxAge: true,
  skipSignatureVerification: true,
  inboxChallengePolicy: true,
  firstKnock: true,
  permanentFailureStatusCodes: true,
  inboxIdempotencyTtl: true,
  inboxMaxBytes: true,
  webhooks: true,
  hostHealth: true,
  fanoutDeliveries: true,
  hostPolicy: true,
  waitedActivities: true,
  kvPrefixes: true,
};

/**
 * {@link FederationOptions} after validation, with defaults filled in.
 * @since 0.1.0
 */
export interface ResolvedFederationOptions
  extends ResolvedFederationOperationsOptions, ResolvedTimeoutOptions {
  /** The `maxDeliveries` option: hand-outs without an outcome allowed (0.4.0). */
  readonly maxDeliveries: number;
  readonly kv: KvStore;
  /** The queue of each role that has one. */
  readonly queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>;
  readonly manuallyStartQueue: boolean;
  /** The machine id, when given (0.4.0). */
  readonly machineId?: string;
  /** The canonical origin, e.g. `https://example.com`, if set. */
  readonly origin?: string;
  /** The host of fediverse handles, when it is not the web host (0.3.0). */
  readonly handleHost?: string;
  readonly inboxRetryPolicy: RetryPolicy;
  readonly outboxRetryPolicy: RetryPolicy;
  readonly taskRetryPolicy: RetryPolicy;
  readonly taskQueueResolution: "fallback" | "strict";
  readonly documentLoader: DocumentLoader;
  readonly userAgent: string;
  readonly allowPrivateAddress: boolean;
  /** The limits of outgoing requests, since 0.3.0. */
  readonly remoteRequests: ResolvedRemoteRequestOptions;
  /** The limits of remote documents, since 0.4.0. */
  readonly remoteDocuments: ResolvedRemoteDocumentOptions;
  readonly tracerProvider: TracerProvider;
  // ActivityPub over HTTP, since 0.2.0.
  readonly signatureTimeWindow: DurationInput | false;
  /** The oldest proof accepted, since 0.4.0. */
  readonly proofMaxAge: DurationInput | false;
  readonly skipSignatureVerification: boolean;
  /** The inbox challenge policy when enabled, since 0.3.0. */
  readonly inboxChallengePolicy?: InboxChallengePolicy;
  readonly firstKnock: HttpSignatureSpec;
  readonly permanentFailureStatusCodes: readonly number[];
  readonly inboxIdempotencyTtlMs: number;
  /** The inbox body cap in bytes, since 0.3.0. */
  readonly inboxMaxBytes: number;
  // Operator features, since 0.2.0.
  readonly webhooks: ResolvedWebhookOptions;
  readonly hostHealth?: ResolvedHostHealthOptions;
  /** Direct first attempts of fan-out deliveries, when on (0.3.0). */
  readonly fanoutDeliveries?: ResolvedFanoutDeliveries;
  /** The host policy, when set (0.4.0). */
  readonly hostPolicy?: ResolvedHostPolicy;
  /** The type ids of `waitedActivities` (0.4.0). */
  readonly waitedActivityTypeIds: readonly string[];
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
  assertKnownOptions(options, Object.keys(OPTION_NAMES), { hints: FEDIFY_ONLY_OPTION_HINTS });
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
  let machineId: string | undefined;
  try {
    machineId = checkMachineId(options.machineId, "createFederation()");
  } catch (error) {
    throw new FederationOptionError("machineId", (error as Error).message);
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
  const remoteRequests = resolveRemoteRequestOptions(options.remoteRequests);
  const remoteDocuments = resolveRemoteDocumentOptions(options.remoteDocuments);
  // Whatever loads them, every document is held to the limits before the
  // JSON-LD processing that parses it.
  const documentLoader = withDocumentLimits(
    resolveDocumentLoaderFactory(options, { allowPrivateAddress, userAgent }) ??
      options.documentLoader ??
      createFetchDocumentLoader({
        userAgent,
        allowPrivateAddress,
        timeout: { milliseconds: remoteRequests.timeoutMs },
        maxBodyBytes: remoteRequests.maxBodyBytes,
        maxRedirects: remoteRequests.maxRedirects,
      }),
    remoteDocuments.limits,
  );
  const tracerProvider = options.tracerProvider ?? trace.getTracerProvider();
  if (typeof tracerProvider?.getTracer !== "function") {
    throw new FederationOptionError(
      "tracerProvider",
      "The tracerProvider option must be an OpenTelemetry TracerProvider.",
    );
  }
  const timeouts = resolveTimeoutOptions(options);
  const hostPolicy = resolveHostPolicy(options.hostPolicy);
  if (
    (hostPolicy?.concurrencyOf != null || hostPolicy?.rateOf != null) &&
    typeof kv.cas !== "function"
  ) {
    const option = hostPolicy.concurrencyOf != null ? "hostPolicy.concurrency" : "hostPolicy.rate";
    throw new FederationOptionError(
      option,
      `The ${option} option needs a KvStore with cas(), so that every worker process shares ` +
        "the hosts' limits; this store has none (use MemoryKvStore, SqliteKvStore, " +
        "PostgresKvStore, RedisKvStore or DenoKvStore).",
    );
  }
  const fanoutDeliveries = resolveFanoutDeliveries(
    options.fanoutDeliveries,
    timeouts.outboxTimeoutMs,
    remoteRequests.deliveryTimeoutMs,
  );
  return {
    ...resolveFederationOperationsOptions(options),
    ...timeouts,
    ...resolveDeliveryLimitOptions(options),
    // Parts of Fedwork that write to the store may give a TTL in any form;
    // the store gets a Temporal.Duration, the form Fedify's stores expect.
    kv: withTemporalTtl(withKeyPrefixes(kv, resolveKvPrefixes(options.kvPrefixes))),
    queues,
    manuallyStartQueue,
    ...(machineId == null ? {} : { machineId }),
    origin: resolveOrigin(options.origin),
    handleHost: resolveHandleHost(options.origin),
    inboxRetryPolicy: resolveRetryPolicy("inboxRetryPolicy", options.inboxRetryPolicy),
    outboxRetryPolicy: resolveRetryPolicy("outboxRetryPolicy", options.outboxRetryPolicy),
    taskRetryPolicy: resolveRetryPolicy("taskRetryPolicy", options.taskRetryPolicy),
    taskQueueResolution,
    documentLoader,
    userAgent,
    allowPrivateAddress,
    remoteRequests,
    remoteDocuments,
    tracerProvider,
    ...resolveActivityPubOptions(options),
    webhooks: resolveWebhookOptions(options.webhooks),
    ...resolveOptionalHostHealth(options.hostHealth),
    ...(fanoutDeliveries == null ? {} : { fanoutDeliveries }),
    ...(hostPolicy == null ? {} : { hostPolicy }),
    waitedActivityTypeIds: resolveWaitedActivities(options.waitedActivities),
  };
}

/** The type ids of the `waitedActivities` option, checked. */
function resolveWaitedActivities(value: unknown): readonly string[] {
  if (value == null) return [];
  if (!Array.isArray(value)) {
    throw new FederationOptionError(
      "waitedActivities",
      "The waitedActivities option must be an array of activity classes of @fedify/vocab, " +
        "e.g. [Accept].",
    );
  }
  return value.map((type, index) => {
    const typeId = activityTypeIdOf(type);
    if (typeId == null) {
      throw new FederationOptionError(
        "waitedActivities",
        `The waitedActivities option must hold activity classes of @fedify/vocab, e.g. ` +
          `[Accept]; item ${index} is not one.`,
      );
    }
    return typeId;
  });
}

// --- ActivityPub over HTTP (signatures, inbox, delivery), since 0.2.0 ---

function resolveActivityPubOptions<TContextData>(options: FederationOptions<TContextData>) {
  const signatureTimeWindow = options.signatureTimeWindow ?? { hours: 1 };
  if (signatureTimeWindow !== false) {
    try {
      durationToMilliseconds(signatureTimeWindow, "signatureTimeWindow");
    } catch (error) {
      throw new FederationOptionError(
        "signatureTimeWindow",
        `The signatureTimeWindow option must be a duration or false: ${(error as Error).message}`,
      );
    }
  }
  const proofMaxAge = options.proofMaxAge ?? DEFAULT_PROOF_MAX_AGE;
  if (proofMaxAge !== false) {
    try {
      durationToMilliseconds(proofMaxAge, "proofMaxAge");
    } catch (error) {
      throw new FederationOptionError(
        "proofMaxAge",
        `The proofMaxAge option must be a duration or false: ${(error as Error).message}`,
      );
    }
  }
  const skipSignatureVerification = options.skipSignatureVerification ?? false;
  if (typeof skipSignatureVerification !== "boolean") {
    throw new FederationOptionError(
      "skipSignatureVerification",
      "The skipSignatureVerification option must be a boolean.",
    );
  }
  const firstKnock = options.firstKnock ?? "rfc9421";
  if (firstKnock !== "rfc9421" && firstKnock !== "draft-cavage-http-signatures-12") {
    throw new FederationOptionError(
      "firstKnock",
      'The firstKnock option must be "rfc9421" or "draft-cavage-http-signatures-12"; got ' +
        `${JSON.stringify(firstKnock)}.`,
    );
  }
  const permanentFailureStatusCodes = options.permanentFailureStatusCodes ?? [404, 410];
  if (
    !Array.isArray(permanentFailureStatusCodes) ||
    permanentFailureStatusCodes.some((code) => !Number.isInteger(code) || code < 400 || code > 599)
  ) {
    throw new FederationOptionError(
      "permanentFailureStatusCodes",
      "The permanentFailureStatusCodes option must be an array of HTTP error statuses " +
        "(400–599), e.g. [404, 410].",
    );
  }
  let inboxIdempotencyTtlMs: number;
  try {
    inboxIdempotencyTtlMs = durationToMilliseconds(
      options.inboxIdempotencyTtl ?? { days: 1 },
      "inboxIdempotencyTtl",
    );
  } catch (error) {
    throw new FederationOptionError(
      "inboxIdempotencyTtl",
      `The inboxIdempotencyTtl option must be a duration: ${(error as Error).message}`,
    );
  }
  const inboxMaxBytes = options.inboxMaxBytes ?? DEFAULT_MAX_INBOX_BODY_SIZE;
  if (!Number.isSafeInteger(inboxMaxBytes) || inboxMaxBytes < 1) {
    throw new FederationOptionError(
      "inboxMaxBytes",
      "The inboxMaxBytes option must be a positive integer number of bytes, e.g. 1048576 " +
        `(1 MiB, the default); got ${
          typeof inboxMaxBytes === "string" ? JSON.stringify(inboxMaxBytes) : String(inboxMaxBytes)
        }.`,
    );
  }
  return {
    signatureTimeWindow,
    proofMaxAge,
    skipSignatureVerification,
    inboxChallengePolicy: checkInboxChallengePolicy(options.inboxChallengePolicy),
    firstKnock,
    permanentFailureStatusCodes: [...permanentFailureStatusCodes],
    inboxIdempotencyTtlMs,
    inboxMaxBytes,
  } as const;
}

function resolveOptionalHostHealth(
  option: FederationHostHealthOptions | false | undefined,
): { hostHealth?: ResolvedHostHealthOptions } {
  const hostHealth = resolveHostHealthOptions(option);
  return hostHealth == null ? {} : { hostHealth };
}

function resolveQueues(
  queue: MessageQueue | FederationQueueOptions | undefined,
): Partial<Record<QueueRole, MessageQueue>> {
  if (queue == null) return {};
  if (isMessageQueue(queue)) return queuesOfOneQueue(queue);
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
