// Outgoing requests through Node.js's own HTTP client (`node:http` and
// `node:https`) rather than its `fetch()`.
//
// Why by hand: Node.js's `fetch()` (undici behind the WHATWG API) spends
// 0.3–0.6 ms of CPU on a small POST to a loopback server where
// `http.request()` spends about 0.1 ms, both with connections kept alive
// (2-core AMD EPYC, Node.js 24).  A fan-out pays that once per inbox: with
// 8 deliveries at once, signed fan-out to 2,000 inboxes went from about
// 790–940 to 1,110–1,280 deliveries per second (docs/benchmarks.md).  On
// Deno, Bun and Cloudflare Workers `fetch()` is the runtime's own and this
// module is not used.
//
// What fetch() gave that is done here: connections kept alive per origin
// (closed after 4 idle seconds, like undici's default), gzip, deflate and
// Brotli bodies decoded (the body cap counts decoded bytes, so a
// compression bomb stops at the cap), no redirect followed (the caller
// follows them by hand), and a signal that aborts the exchange at any point.
import type { Agent as HttpAgent, IncomingMessage } from "node:http";
import { type CappedBody, CappedChunks } from "../../http/capped-body.ts";
import { PrivateAddressError } from "./errors.ts";
import { isCloudflareWorkers } from "./private-address.ts";
import type { AnsweredRequest, OutgoingRequest } from "./outgoing-request.ts";

/**
 * How a connection's address is checked: `"lookup"` refuses, at the
 * connection's own DNS lookup, a name that resolves to a non-public
 * address; `"none"` connects wherever the URL points (an IP literal checked
 * beforehand, or `allowPrivateAddress`).
 * @internal
 * @since 0.3.0
 */
export type AddressCheck = "lookup" | "none";

/**
 * The callback of a `dns.lookup`-shaped function.
 * @internal
 * @since 0.3.0
 */
export type LookupCallback = (
  error: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * A `dns.lookup`-shaped function, as `net.connect()` takes it.
 * @internal
 * @since 0.3.0
 */
export type LookupFunction = (
  hostname: string,
  options: { readonly family?: number | string; readonly all?: boolean },
  callback: LookupCallback,
) => void;

/** How long an idle kept-alive connection stays open: undici's default. */
const IDLE_CONNECTION_MS = 4_000;

/**
 * Node.js's HTTP client with kept-alive connections, one pool per scheme
 * and address check.
 * @internal
 * @since 0.3.0
 */
export class NodeHttpClient {
  readonly #http: typeof import("node:http");
  readonly #https: typeof import("node:https");
  readonly #zlib: typeof import("node:zlib");
  readonly #agents = new Map<string, HttpAgent>();
  readonly #lookup: LookupFunction;

  /**
   * @param modules Node.js's `http`, `https` and `zlib` modules.
   * @param lookup The DNS lookup of connections under the `"lookup"` check.
   */
  constructor(
    modules: {
      readonly http: typeof import("node:http");
      readonly https: typeof import("node:https");
      readonly zlib: typeof import("node:zlib");
    },
    lookup: LookupFunction,
  ) {
    this.#http = modules.http;
    this.#https = modules.https;
    this.#zlib = modules.zlib;
    this.#lookup = lookup;
  }

  /**
   * Sends a request and resolves once the response headers arrived.
   * @param request The URL (http or https), method, headers and body.
   * @param check How the connection's address is checked.
   * @param signal Aborts the exchange, the body's reading included.
   * @returns The response, its body unread.
   * @throws {PrivateAddressError} When the name resolves to a non-public
   *         address under the `"lookup"` check.
   * @throws {unknown} The signal's reason when it aborts.
   * @throws {TypeError} On any other network failure, with the cause.
   */
  send(
    request: OutgoingRequest,
    check: AddressCheck,
    signal: AbortSignal,
  ): Promise<AnsweredRequest> {
    const { url } = request;
    const secure = url.protocol === "https:";
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => headers[name] = value);
    // fetch() asks for compressed bodies too; Brotli only over TLS, as
    // undici does.
    headers["accept-encoding"] ??= secure ? "br, gzip, deflate" : "gzip, deflate";
    if (request.body != null) headers["content-length"] = String(request.body.byteLength);
    return new Promise<AnsweredRequest>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const outgoing = (secure ? this.#https : this.#http).request(url, {
        method: request.method,
        headers,
        agent: this.#agent(secure, check),
      });
      // Aborting destroys the exchange until the body is read or dropped,
      // so that an answer nobody reads cannot hold its connection.
      const onAbort = () => outgoing.destroy(signal.reason);
      const release = () => signal.removeEventListener("abort", onAbort);
      signal.addEventListener("abort", onAbort, { once: true });
      outgoing.once("response", (response) => resolve(this.#answered(url, response, release)));
      // `on`, not `once`: an error event with no listener would crash the
      // process, and a hostile peer must not be able to do that.
      outgoing.on("error", (error) => {
        release();
        reject(failure(url, error, signal));
      });
      outgoing.end(request.body ?? undefined);
    });
  }

  /** The kept-alive connection pool of a scheme and address check. */
  #agent(secure: boolean, check: AddressCheck): HttpAgent {
    const name = `${secure ? "https" : "http"} ${check}`;
    let agent = this.#agents.get(name);
    if (agent == null) {
      const options = {
        keepAlive: true,
        // The agent closes a kept-alive connection after this long idle.
        timeout: IDLE_CONNECTION_MS,
        ...(check === "lookup" ? { lookup: this.#lookup } : {}),
      };
      agent = secure ? new this.#https.Agent(options) : new this.#http.Agent(options);
      this.#agents.set(name, agent);
    }
    return agent;
  }

  #answered(url: URL, response: IncomingMessage, release: () => void): AnsweredRequest {
    // The connection may fail before anyone reads the body; the reading
    // (or nothing, when the body is dropped) reports it.
    response.on("error", ignore);
    const zlib = this.#zlib;
    // A delivery that succeeds reads only a header or two: the WHATWG
    // Headers (a validation per header) are built only when asked for.
    let headers: Headers | undefined;
    const raw = response.rawHeaders;
    return {
      status: response.statusCode ?? 0,
      get headers() {
        return headers ??= headersOf(raw);
      },
      header: (name) => headers?.get(name) ?? rawHeader(raw, name),
      read: (maxBytes, signal) => {
        release();
        const decoder = decoderFor(zlib, rawHeader(raw, "content-encoding"));
        return readCapped(url, response, decoder, maxBytes, signal);
      },
      discard: () => {
        release();
        response.destroy();
      },
    };
  }
}

/** Node.js's raw response headers as WHATWG `Headers`. */
function headersOf(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i], raw[i + 1]);
    } catch {
      // A header the Fetch API cannot hold (fetch() would have refused
      // the whole response); nothing here reads such a header.
    }
  }
  return headers;
}

/**
 * A header of Node.js's raw response headers as `Headers.get()` reads it:
 * every field of the name (case-insensitive), trimmed, joined with ", ",
 * or `null` when there is none.
 */
function rawHeader(raw: readonly string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length !== name.length || raw[i].toLowerCase() !== name) continue;
    const field = raw[i + 1].trim();
    value = value == null ? field : `${value}, ${field}`;
  }
  return value;
}

/** A stream decoding the body's `Content-Encoding`, or `null` for none. */
function decoderFor(
  zlib: typeof import("node:zlib"),
  contentEncoding: string | null,
): Decoder | null {
  const encoding = contentEncoding?.trim().toLowerCase();
  // Lenient like browsers: a stream that ends early is not an error.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (encoding === "gzip" || encoding === "x-gzip") return zlib.createGunzip(flush);
  if (encoding === "deflate") return zlib.createInflate(flush);
  if (encoding === "br") return zlib.createBrotliDecompress();
  return null;
}

type Decoder = ReturnType<typeof import("node:zlib").createGunzip>;

/** Reads `response` (through `decoder`), keeping at most `maxBytes` bytes. */
function readCapped(
  url: URL,
  response: IncomingMessage,
  decoder: Decoder | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<CappedBody> {
  const source = decoder == null ? response : response.pipe(decoder);
  return new Promise<CappedBody>((resolve, reject) => {
    const kept = new CappedChunks(maxBytes);
    let settled = false;
    const stop = () => {
      settled = true;
      signal.removeEventListener("abort", onAbort);
      source.off("data", onData);
    };
    const done = (truncated: boolean) => {
      if (settled) return;
      stop();
      if (truncated) {
        response.destroy();
        decoder?.destroy();
      }
      resolve({ body: kept.bytes(), truncated });
    };
    const fail = (error: unknown) => {
      if (settled) return;
      stop();
      response.destroy();
      decoder?.destroy();
      reject(failure(url, error, signal));
    };
    const onAbort = () => fail(signal.reason);
    const onData = (chunk: Uint8Array) => {
      if (!kept.add(chunk)) done(true);
    };
    if (signal.aborted) {
      fail(signal.reason);
      return;
    }
    if (response.destroyed) {
      // The connection failed before the reading began: no event is left
      // to come.
      fail(response.errored ?? new Error("the connection closed before the body was read"));
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    source.on("data", onData);
    source.once("end", () => done(false));
    source.on("error", fail);
    if (decoder != null) response.on("error", fail);
    // A connection closed before the end: Node.js emits an error for it,
    // but a closed stream that never ended must not leave this pending.
    response.once("close", () => {
      if (!response.complete) fail(new Error("the connection closed before the body ended"));
    });
  });
}

function ignore(): void {}

/**
 * What a failed exchange throws: the signal's reason once it aborted, a
 * refused address as a {@link PrivateAddressError} for the URL, anything
 * else as a `TypeError` (what `fetch()` throws on a network error) with the
 * cause.
 */
function failure(url: URL, error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (error instanceof PrivateAddressError) return new PrivateAddressError(url.href, error.address);
  const message = error instanceof Error ? error.message : String(error);
  return new TypeError(`The request to ${url.origin} failed: ${message}`, { cause: error });
}

/**
 * Loads Node.js's HTTP client, or resolves `null` on another runtime (Deno,
 * Bun and Cloudflare Workers also offer `node:http`, but their `fetch()` is
 * their own and quick).  Each call makes a new client with pools of its
 * own; the caller keeps one.
 * @param lookup The DNS lookup of connections under the `"lookup"` check.
 * @internal
 * @since 0.3.0
 */
export async function loadNodeHttpClient(lookup: LookupFunction): Promise<NodeHttpClient | null> {
  if (!isNodeJs()) return null;
  try {
    const [http, https, zlib] = await Promise.all([
      import("node:http"),
      import("node:https"),
      import("node:zlib"),
    ]);
    return new NodeHttpClient({ http, https, zlib }, lookup);
  } catch {
    return null;
  }
}

function isNodeJs(): boolean {
  const global = globalThis as {
    Deno?: unknown;
    Bun?: unknown;
    process?: { versions?: Record<string, string | undefined> };
  };
  if (global.Deno != null || global.Bun != null || isCloudflareWorkers()) return false;
  return global.process?.versions?.node != null;
}
