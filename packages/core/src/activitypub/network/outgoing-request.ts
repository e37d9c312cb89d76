// What one outgoing request is made of, before and after it is sent, the
// same on every runtime: fetchRemote() builds, signs and sends these
// without WHATWG `Request` objects, which cost undici tens of
// microseconds each on Node.js (node-http-client.ts says why that counts).
import type { CappedBody } from "../../http/capped-body.ts";

/**
 * One request about to be sent: its URL (http or https), method, headers
 * and body.  A signer sets headers on it.
 * @internal
 * @since 0.3.0
 */
export interface OutgoingRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Headers;
  readonly body: Uint8Array | null;
}

/**
 * A response whose headers arrived and whose body is still to be read.
 * @internal
 * @since 0.3.0
 */
export interface AnsweredRequest {
  /** The status code. */
  readonly status: number;
  /**
   * The response headers.  May be built on first read (Node.js): callers
   * that want one or two headers read them with {@link header} instead.
   */
  readonly headers: Headers;
  /**
   * One response header, as `headers.get(name)` returns it.
   * @param name The header's name, in lower case.
   * @since 0.4.0
   */
  header(name: string): string | null;
  /**
   * Reads the body (decoded), keeping at most `maxBytes` bytes: past them it
   * stops reading, closes the connection and returns what it kept with
   * `truncated: true`.
   * @throws {unknown} The signal's reason when it aborts, or a `TypeError`
   *         when the connection fails before the body ends.
   */
  read(maxBytes: number, signal: AbortSignal): Promise<CappedBody>;
  /** Drops the body unread (and the connection it came on). */
  discard(): void;
}
