// Fedify's createContext() and createRequestContext() helpers: a context
// without first keeping a federation around (one is made when none is
// given).
import type { Activity } from "@fedify/vocab";
import { createFederation, testFederationStateOf } from "./federation.ts";
import type { MockInboxContext, MockOutboxContext } from "./listener-types.ts";
import type { MockContext, MockFederation, MockRequestContext } from "./types.ts";

/**
 * Options of {@link createContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateContextOptions<TContextData> {
  /** The context's data. */
  readonly data: TContextData;
  /** The test federation; a new one by default. */
  readonly federation?: MockFederation<TContextData>;
  /**
   * The context's base URL.
   * @default `https://example.com/`
   */
  readonly url?: URL;
}

/**
 * Options of {@link createRequestContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateRequestContextOptions<TContextData>
  extends CreateContextOptions<TContextData> {
  /** The request; a `GET` of `url` by default. */
  readonly request?: Request;
}

/**
 * Options of {@link createInboxContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateInboxContextOptions<TContextData>
  extends CreateContextOptions<TContextData> {
  /**
   * The identifier of the personal inbox, or `null` for the shared inbox.
   * @default `null`
   */
  readonly recipient?: string | null;
  /**
   * The activity the listener received: what `forwardActivity()` records.
   * Without it `forwardActivity()` throws.
   */
  readonly activity?: Activity;
}

/**
 * Options of {@link createOutboxContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateOutboxContextOptions<TContextData>
  extends CreateRequestContextOptions<TContextData> {
  /** The identifier of the outbox's owner. */
  readonly identifier: string;
  /**
   * The activity the client posted: what `forwardActivity()` records.
   * Without it `forwardActivity()` throws.
   */
  readonly activity?: Activity;
}

/**
 * Makes a context of a test federation, as `@fedify/testing`'s
 * `createContext()` does.
 * @typeParam TContextData The application data.
 * @param options The data, the federation and the URL.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation.
 * @since 0.4.0
 */
export function createContext<TContextData>(
  options: CreateContextOptions<TContextData>,
): MockContext<TContextData> {
  const federation = federationOf(options, "createContext()");
  return federation.createContext(options.url ?? new URL("https://example.com/"), options.data);
}

/**
 * Makes a request context of a test federation, as `@fedify/testing`'s
 * `createRequestContext()` does.
 * @typeParam TContextData The application data.
 * @param options The data, the federation, the URL and the request.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation.
 * @since 0.4.0
 */
export function createRequestContext<TContextData>(
  options: CreateRequestContextOptions<TContextData>,
): MockRequestContext<TContextData> {
  const federation = federationOf(options, "createRequestContext()");
  const request = options.request ?? new Request(options.url ?? new URL("https://example.com/"));
  return federation.createContext(request, options.data);
}

/**
 * Makes the context an inbox listener receives, as `@fedify/testing`'s
 * `createInboxContext()` does, to call a listener directly: its
 * `sendActivity()` and `forwardActivity()` record, and its `signal`
 * never aborts.
 * @typeParam TContextData The application data.
 * @param options The data, the federation, the URL, the recipient and the
 *                received activity.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation or
 *         `recipient` is not a string or `null`.
 * @since 0.4.0
 * @example
 * ```ts ignore
 * const ctx = createInboxContext({ data: undefined, recipient: "alice", activity: follow });
 * await onFollow(ctx, follow);
 * assertEquals(ctx.getSentActivities()[0].activity instanceof Accept, true);
 * ```
 */
export function createInboxContext<TContextData>(
  options: CreateInboxContextOptions<TContextData>,
): MockInboxContext<TContextData> {
  const federation = federationOf(options, "createInboxContext()");
  const recipient = options.recipient ?? null;
  if (recipient !== null && typeof recipient !== "string") {
    throw new TypeError("The recipient option of createInboxContext() must be a string or null.");
  }
  const state = testFederationStateOf<TContextData>(federation)!;
  const ctx = state.real.createContext(options.url ?? DEFAULT_URL, options.data);
  return state.recorder.wrapContext(ctx, {
    kind: "inbox",
    members: { recipient, signal: new AbortController().signal },
    received: options.activity,
  }) as unknown as MockInboxContext<TContextData>;
}

/**
 * Makes the context an outbox listener receives, as `@fedify/testing`'s
 * `createOutboxContext()` does, to call a listener directly: its
 * `sendActivity()` and `forwardActivity()` record, and
 * `hasDeliveredActivity()` says whether either was called.
 * @typeParam TContextData The application data.
 * @param options The data, the owner's identifier, the federation, the
 *                URL, the request and the posted activity.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation or
 *         `identifier` is not a string.
 * @since 0.4.0
 */
export function createOutboxContext<TContextData>(
  options: CreateOutboxContextOptions<TContextData>,
): MockOutboxContext<TContextData> {
  if (typeof options?.identifier !== "string") {
    throw new TypeError("The identifier option of createOutboxContext() must be a string.");
  }
  const federation = federationOf(options, "createOutboxContext()");
  const state = testFederationStateOf<TContextData>(federation)!;
  const url = options.url ?? DEFAULT_URL;
  const request = options.request ?? new Request(url, { method: "POST" });
  const ctx = state.real.createContext(request, options.data);
  return state.recorder.wrapContext(ctx, {
    kind: "outbox",
    members: { identifier: options.identifier },
    received: options.activity,
  }) as unknown as MockOutboxContext<TContextData>;
}

const DEFAULT_URL = new URL("https://example.com/");

function federationOf<TContextData>(
  options: CreateContextOptions<TContextData>,
  caller: string,
): MockFederation<TContextData> {
  if (options.federation == null) return createFederation<TContextData>();
  if (testFederationStateOf(options.federation) == null) {
    throw new TypeError(
      `The federation given to ${caller} must come from createFederation() of ` +
        "@fedwork/testing/app.",
    );
  }
  return options.federation;
}
