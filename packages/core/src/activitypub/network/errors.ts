import { markRemoteFailureClass } from "../../processing/remote-failure.ts";

/**
 * Thrown when Fedwork refuses to contact a URL because it points to a
 * loopback, private or otherwise non-public address and the
 * `allowPrivateAddress` option is `false` (the default).
 * @since 0.1.0
 */
export class PrivateAddressError extends Error {
  /** The refused URL. */
  readonly url: string;
  /**
   * The non-public address (or name, such as `localhost`) it resolved to.
   * @since 0.3.0
   */
  readonly address: string;
  /**
   * @param url The refused URL.
   * @param address The non-public address it resolved to.
   */
  constructor(url: string, address: string) {
    super(
      `Refusing to contact ${url}: it resolves to the non-public address ${address}. ` +
        "Set the allowPrivateAddress option to true to allow this (for tests and " +
        "development only).",
    );
    this.name = "PrivateAddressError";
    this.url = url;
    this.address = address;
  }
}

/**
 * The base class of the errors {@link fetchRemote} throws when a remote
 * server does not keep within a limit: too slow, too big, too many
 * redirects, or the wrong content type.  None of them is worth a stack
 * trace in a log: they describe the remote party, not a bug.
 * @since 0.3.0
 */
export class RemoteRequestError extends Error {
  /** The URL that was requested (the first one, before redirects). */
  readonly url: string;
  /**
   * @param url The requested URL.
   * @param message What went wrong.
   * @param options The underlying cause, if any.
   */
  constructor(url: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RemoteRequestError";
    this.url = url;
  }
}

/**
 * Thrown when a remote request (connecting, the headers, every redirect and
 * the body together) does not finish within its time limit.  The request is
 * aborted, so the worker slot that made it is free again.
 * @since 0.3.0
 */
export class RemoteTimeoutError extends RemoteRequestError {
  /** The limit that passed, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * @param url The requested URL.
   * @param timeoutMs The limit, in milliseconds.
   * @param options The underlying cause, if any.
   */
  constructor(url: string, timeoutMs: number, options?: ErrorOptions) {
    super(url, `${url} did not answer in full within ${timeoutMs} ms.`, options);
    this.name = "RemoteTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Thrown when a remote response's body is larger than the limit.  The body
 * is read as a stream and the reading stops at the limit, so a huge or
 * endless body costs at most the limit in memory.
 * @since 0.3.0
 */
export class RemoteBodyTooLargeError extends RemoteRequestError {
  /** The limit, in bytes. */
  readonly maxBodyBytes: number;
  /**
   * @param url The requested URL.
   * @param maxBodyBytes The limit, in bytes.
   */
  constructor(url: string, maxBodyBytes: number) {
    super(url, `The response from ${url} is larger than ${maxBodyBytes} bytes.`);
    this.name = "RemoteBodyTooLargeError";
    this.maxBodyBytes = maxBodyBytes;
  }
}

/**
 * Thrown when a remote server redirects more often than allowed, or at all
 * where redirects are not followed.
 * @since 0.3.0
 */
export class TooManyRedirectsError extends RemoteRequestError {
  /**
   * @param url The requested URL.
   * @param maxRedirects The number of redirects allowed.
   */
  constructor(url: string, maxRedirects: number) {
    super(url, `${url} redirected more than ${maxRedirects} times.`);
    this.name = "TooManyRedirectsError";
  }
}

/**
 * Thrown when a remote document comes with a content type that is not
 * among the accepted ones (e.g. `text/html` or `text/plain` where a JSON-LD
 * document was asked for): a user-uploaded file on a server must not pass
 * for that server's actor or key.
 * @since 0.3.0
 */
export class UnacceptableContentTypeError extends RemoteRequestError {
  /** The content type the server sent, or `null` when it sent none. */
  readonly contentType: string | null;
  /**
   * @param url The URL that answered.
   * @param contentType The content type it sent.
   * @param accepted The content types that would have been accepted.
   */
  constructor(url: string, contentType: string | null, accepted: readonly string[]) {
    super(
      url,
      `${url} answered with the content type ${contentType ?? "(none)"}; ` +
        `expected one of ${accepted.join(", ")}.`,
    );
    this.name = "UnacceptableContentTypeError";
    this.contentType = contentType;
  }
}

// A remote party's doing, not a bug here: logged without a stack.
markRemoteFailureClass(PrivateAddressError);
markRemoteFailureClass(RemoteRequestError);
