import { assertKnownOptions } from "../../options/known-options.ts";
import { nonNegativeIntegerOption, positiveDurationOption } from "../../options/value-options.ts";
import type { DurationInput } from "../../time/duration.ts";
import {
  RemoteBodyTooLargeError,
  RemoteTimeoutError,
  TooManyRedirectsError,
  UnacceptableContentTypeError,
} from "./errors.ts";
import { guardedFetch } from "./guarded-fetch.ts";
import type { AnsweredRequest, OutgoingRequest } from "./outgoing-request.ts";
import { markRemoteFailure } from "../../processing/remote-failure.ts";

/**
 * The default time limit of one remote request (documents, keys, WebFinger,
 * NodeInfo, probes, webhooks): 10 seconds for connecting, every redirect,
 * the headers and the body together.  A healthy server answers a document in
 * well under a second; Mastodon's own fetches give up after 10 seconds.
 * @since 0.3.0
 */
export const DEFAULT_REMOTE_TIMEOUT_MS = 10_000;

/**
 * The default time limit of one delivery POST: 15 seconds.  Deliveries are
 * retried, so a slow inbox costs a retry, never a worker slot for good.
 * @since 0.3.0
 */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 15_000;

/**
 * The default cap on a remote document's body: 1 MiB, far above any actor,
 * key or activity (the largest real actors, with long profile fields, are
 * a few tens of KiB).
 * @since 0.3.0
 */
export const DEFAULT_MAX_REMOTE_BODY_BYTES = 1024 * 1024;

/**
 * The default number of redirects followed: 5.
 * @since 0.3.0
 */
export const DEFAULT_MAX_REDIRECTS = 5;

/**
 * The content types a JSON-LD document (an actor, a key, an object) may come
 * with.
 * @since 0.3.0
 */
export const JSON_LD_CONTENT_TYPES: readonly string[] = [
  "application/activity+json",
  "application/ld+json",
  "application/json",
];

/**
 * The limits every remote request keeps, as a federation configures them
 * (`FederationOptions.remoteRequests`).
 * @since 0.3.0
 */
export interface RemoteRequestLimits {
  /**
   * The time limit of one request: connecting, every redirect, the headers
   * and the body together.
   * @default 10 seconds ({@link DEFAULT_REMOTE_TIMEOUT_MS})
   */
  readonly timeout?: DurationInput;
  /**
   * The largest response body read, in bytes.
   * @default 1 MiB ({@link DEFAULT_MAX_REMOTE_BODY_BYTES})
   */
  readonly maxBodyBytes?: number;
  /**
   * How many redirects are followed; each hop's address is checked.
   * @default `5`
   */
  readonly maxRedirects?: number;
}

/**
 * Options for {@link fetchRemote}.
 * @since 0.3.0
 */
export interface FetchRemoteOptions extends RemoteRequestLimits {
  /**
   * The method.  Redirects of a GET are followed (301, 302, 303, 307, 308);
   * a POST is re-sent to the new URL on 301, 302, 307 and 308 (a moved
   * inbox still wants the activity).
   * @default `"GET"`
   */
  readonly method?: "GET" | "POST";
  /** The request headers; `User-Agent` is set from `userAgent`. */
  readonly headers?: HeadersInit;
  /** The body of a POST. */
  readonly body?: Uint8Array | string;
  /** The `User-Agent` header.  Required. */
  readonly userAgent: string;
  /**
   * Whether loopback and private addresses may be contacted.  Required: set
   * it to `true` only in tests and development.
   */
  readonly allowPrivateAddress: boolean;
  /**
   * Whether redirects are followed (`"follow"`, the default) or refused
   * with a {@link TooManyRedirectsError} (`"error"`, e.g. for webhooks,
   * whose URL is configured exactly).
   */
  readonly redirect?: "follow" | "error";
  /**
   * When the body passes `maxBodyBytes`: throw a
   * {@link RemoteBodyTooLargeError} (`"error"`, the default), or keep the
   * first `maxBodyBytes` bytes and stop reading (`"truncate"`, e.g. for a
   * failed delivery's error body, kept only for the logs).
   */
  readonly oversizedBody?: "error" | "truncate";
  /**
   * The content types a successful (2xx) response may have, e.g.
   * {@link JSON_LD_CONTENT_TYPES}; others throw an
   * {@link UnacceptableContentTypeError}.  Any by default.
   */
  readonly acceptContentTypes?: readonly string[];
  /**
   * Called with each hop's request before it is sent, to sign it for that
   * URL and that moment (HTTP signatures cover the target).
   */
  readonly sign?: (request: Request) => Request | Promise<Request>;
  /** Aborts the request. */
  readonly signal?: AbortSignal;
}

const FETCH_REMOTE_OPTION_NAMES: readonly (keyof FetchRemoteOptions)[] = [
  "timeout",
  "maxBodyBytes",
  "maxRedirects",
  "method",
  "headers",
  "body",
  "userAgent",
  "allowPrivateAddress",
  "redirect",
  "oversizedBody",
  "acceptContentTypes",
  "sign",
  "signal",
];

/**
 * A remote server's answer, with its body read (up to the limit).
 * @since 0.3.0
 */
export interface RemoteResponse {
  /** The status. */
  readonly status: number;
  /** Whether the status is 2xx. */
  readonly ok: boolean;
  /** The URL that answered, after redirects. */
  readonly url: URL;
  /** The response headers. */
  readonly headers: Headers;
  /** The body, at most `maxBodyBytes` bytes. */
  readonly body: Uint8Array;
  /** Whether the body was cut at `maxBodyBytes` (`oversizedBody: "truncate"`). */
  readonly truncated: boolean;
  /** The body as UTF-8 text. */
  text(): string;
  /**
   * The body parsed as JSON.
   * @throws {SyntaxError} When it is not JSON.
   */
  json(): unknown;
}

const GET_REDIRECTS = [301, 302, 303, 307, 308];
// 303 means "GET another resource", which cannot deliver an activity.
const POST_REDIRECTS = [301, 302, 307, 308];

/**
 * Makes one request to a remote server, as every request Fedwork makes
 * does, within limits a hostile server cannot stretch: a total time limit
 * (connect, redirects, headers and body), a body size limit read as a
 * stream (the reading stops at the limit), a redirect limit, the address
 * guard at every hop (see {@link assertPublicUrl}) and, optionally, the
 * content types accepted.  Redirects are followed by hand, so each hop is
 * checked and signed for its own URL.
 * @param url The URL.
 * @param options The method, headers, body, limits and address policy.
 * @returns The response, its body read.
 * @throws {RemoteTimeoutError} When the time limit passed.
 * @throws {RemoteBodyTooLargeError} When the body passed `maxBodyBytes`.
 * @throws {TooManyRedirectsError} When there were too many redirects.
 * @throws {UnacceptableContentTypeError} When a 2xx answer has another
 *         content type than `acceptContentTypes`.
 * @throws {PrivateAddressError} When a hop is on a non-public address and
 *         `allowPrivateAddress` is `false`.
 * @throws {UnknownOptionError} When `options` holds a name it does not
 *         know (a typo, or another library's option).
 * @throws {TypeError} On a network error, or an invalid option.
 * @since 0.3.0
 * @example
 * ```ts
 * import { fetchRemote } from "@fedwork/core";
 *
 * const response = await fetchRemote("https://example.com/page", {
 *   userAgent: "MyApp/1.0",
 *   allowPrivateAddress: false,
 *   timeout: { seconds: 5 },
 *   maxBodyBytes: 256 * 1024,
 * });
 * if (response.ok) console.log(response.text().length);
 * ```
 */
export async function fetchRemote(
  url: URL | string,
  options: FetchRemoteOptions,
): Promise<RemoteResponse> {
  // Checked inside the promise: a wrong option rejects, as every other
  // failure of the call does.
  assertKnownOptions(options, FETCH_REMOTE_OPTION_NAMES, { where: "fetchRemote()" });
  const { sign, ...rest } = options;
  return await fetchRemoteSigned(url, rest, sign == null ? undefined : signThroughRequest(sign));
}

/**
 * Signs an outgoing request for its URL and this moment, in place (its
 * headers) or by returning another one.
 * @internal
 * @since 0.3.0
 */
export type OutgoingSigner = (
  request: OutgoingRequest,
) => OutgoingRequest | void | Promise<OutgoingRequest | void>;

/** A `sign` option (WHATWG `Request` in and out) as an {@link OutgoingSigner}. */
function signThroughRequest(
  sign: (request: Request) => Request | Promise<Request>,
): OutgoingSigner {
  return async (outgoing) => {
    const signed = await sign(
      new Request(outgoing.url, {
        method: outgoing.method,
        headers: outgoing.headers,
        body: outgoing.body as BodyInit | null,
        redirect: "manual",
      }),
    );
    return {
      url: new URL(signed.url),
      method: signed.method,
      headers: signed.headers,
      body: signed.body == null ? null : new Uint8Array(await signed.arrayBuffer()),
    };
  };
}

const encoder = new TextEncoder();

/**
 * {@link fetchRemote} with a signer that works on headers, without WHATWG
 * `Request` objects (the outbox and the document loader sign this way).
 * Options are not checked for unknown names here.
 * @param url The URL.
 * @param options The options of {@link fetchRemote} but `sign`.
 * @param sign Signs each hop's request.
 * @internal
 * @since 0.3.0
 */
export async function fetchRemoteSigned(
  url: URL | string,
  options: Omit<FetchRemoteOptions, "sign">,
  sign: OutgoingSigner | undefined,
): Promise<RemoteResponse> {
  const limits = resolveRemoteRequestLimits(options);
  const requested = new URL(url);
  const method = options.method ?? "GET";
  const redirectStatuses = method === "GET" ? GET_REDIRECTS : POST_REDIRECTS;
  const maxRedirects = options.redirect === "error" ? 0 : limits.maxRedirects;
  // One deadline for the whole exchange, redirects and body included: a
  // server trickling one byte every few seconds would defeat a limit on
  // each read.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limits.timeoutMs);
  const signal = options.signal == null
    ? deadline.signal
    : AbortSignal.any([options.signal, deadline.signal]);
  const body = method === "GET" || options.body == null
    ? null
    : typeof options.body === "string"
    ? encoder.encode(options.body)
    : options.body;
  try {
    let current = requested;
    for (let hop = 0;; hop++) {
      const headers = new Headers(options.headers);
      headers.set("User-Agent", options.userAgent);
      // What a WHATWG Request says of a text body without a content type.
      if (typeof options.body === "string" && body != null && !headers.has("Content-Type")) {
        headers.set("Content-Type", "text/plain;charset=UTF-8");
      }
      let request: OutgoingRequest = { url: current, method, headers, body };
      if (sign != null) request = await sign(request) ?? request;
      const response = await guardedFetch(request, {
        allowPrivateAddress: options.allowPrivateAddress,
        signal,
      });
      const location = response.header("location");
      if (redirectStatuses.includes(response.status) && location != null) {
        response.discard();
        if (hop >= maxRedirects) throw new TooManyRedirectsError(requested.href, maxRedirects);
        current = new URL(location, current);
        continue;
      }
      if (response.status >= 200 && response.status < 300 && options.acceptContentTypes != null) {
        const contentType = response.header("content-type");
        const mediaType = contentType?.split(";")[0].trim().toLowerCase() ?? null;
        if (mediaType == null || !options.acceptContentTypes.includes(mediaType)) {
          response.discard();
          throw new UnacceptableContentTypeError(
            current.href,
            contentType,
            options.acceptContentTypes,
          );
        }
      }
      const declared = Number(response.header("content-length") ?? NaN);
      if (declared > limits.maxBodyBytes && options.oversizedBody !== "truncate") {
        // Refused before a byte of the body is read.
        response.discard();
        throw new RemoteBodyTooLargeError(requested.href, limits.maxBodyBytes);
      }
      const read = await response.read(limits.maxBodyBytes, signal);
      if (read.truncated && options.oversizedBody !== "truncate") {
        throw new RemoteBodyTooLargeError(requested.href, limits.maxBodyBytes);
      }
      return remoteResponse(response, current, read.body, read.truncated);
    }
  } catch (error) {
    if (deadline.signal.aborted && !(options.signal?.aborted ?? false)) {
      throw new RemoteTimeoutError(requested.href, limits.timeoutMs, { cause: error });
    }
    // A network error is a TypeError (or the runtime's own class): mark it
    // as the remote party's, so that it is logged without a stack.
    throw markRemoteFailure(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The limits of {@link RemoteRequestLimits}, checked and in milliseconds.
 * @since 0.3.0
 */
export interface ResolvedRemoteRequestLimits {
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  readonly maxRedirects: number;
}

/**
 * Checks and resolves {@link RemoteRequestLimits}, filling in the defaults.
 * @param limits The limits.
 * @param defaults The defaults to use instead of the module's.
 * @param prefix The options' path for error messages, e.g. `"remoteRequests."`.
 * @returns The resolved limits.
 * @throws {TypeError} When a limit has the wrong type; the message names it.
 * @throws {RangeError} When a limit is out of range; the message names it.
 * @since 0.3.0
 */
export function resolveRemoteRequestLimits(
  limits: RemoteRequestLimits,
  defaults: Partial<ResolvedRemoteRequestLimits> = {},
  prefix = "",
): ResolvedRemoteRequestLimits {
  const timeoutMs = positiveDurationOption(
    limits.timeout ?? undefined,
    `${prefix}timeout`,
    defaults.timeoutMs ?? DEFAULT_REMOTE_TIMEOUT_MS,
  );
  const maxBodyBytes = nonNegativeIntegerOption(
    limits.maxBodyBytes ?? undefined,
    `${prefix}maxBodyBytes`,
    defaults.maxBodyBytes ?? DEFAULT_MAX_REMOTE_BODY_BYTES,
  );
  const maxRedirects = nonNegativeIntegerOption(
    limits.maxRedirects ?? undefined,
    `${prefix}maxRedirects`,
    defaults.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
  );
  if (maxRedirects > 20) {
    throw new RangeError(
      `The ${prefix}maxRedirects option must be an integer from 0 to 20; got ${maxRedirects}.`,
    );
  }
  return { timeoutMs, maxBodyBytes, maxRedirects };
}

function remoteResponse(
  response: AnsweredRequest,
  url: URL,
  body: Uint8Array,
  truncated: boolean,
): RemoteResponse {
  const { status } = response;
  return {
    status,
    ok: status >= 200 && status < 300,
    url,
    // Read through: a delivery that succeeds never builds them.
    get headers() {
      return response.headers;
    },
    body,
    truncated,
    text: () => new TextDecoder().decode(body),
    json: () => JSON.parse(new TextDecoder().decode(body)),
  };
}
