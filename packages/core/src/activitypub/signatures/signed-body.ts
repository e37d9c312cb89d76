/**
 * A request body about to be signed, with its SHA-256 digest computed at
 * most once however many requests carry it: both knocks of one delivery,
 * and every inbox of a fan-out (the body is the same for each).  The
 * `Digest` and `Content-Digest` headers both derive from that one hash.
 *
 * Internal: callers of the public API pass plain bytes.
 */
export class SignedBody {
  /** The body's bytes; never changed once wrapped. */
  readonly bytes: Uint8Array<ArrayBuffer>;
  #sha256: Promise<Uint8Array<ArrayBuffer>> | null = null;

  constructor(bytes: Uint8Array<ArrayBuffer>) {
    this.bytes = bytes;
  }

  /** The body's SHA-256, hashed on first use. */
  sha256(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.#sha256 == null) {
      const pending = crypto.subtle.digest("SHA-256", this.bytes).then((d) => new Uint8Array(d));
      // A failed hash is not kept: the next request hashes again.
      pending.catch(() => {
        if (this.#sha256 === pending) this.#sha256 = null;
      });
      this.#sha256 = pending;
    }
    return this.#sha256;
  }
}

/**
 * What a signer reads of a request and where it writes: the method, the
 * URL and the headers, which it changes in place.  A WHATWG `Request` is
 * not needed to sign (`fetchRemote()` sends without one).
 * @internal
 * @since 0.3.0
 */
export interface SignableMessage {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
}
