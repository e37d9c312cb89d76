/**
 * What {@link readBodyCapped} read.
 * @internal
 * @since 0.3.0
 */
export interface CappedBody {
  /**
   * The bytes read: the whole body, or, when {@link truncated}, at most the
   * first `maxBytes` of it (none when the declared length alone refused it).
   */
  readonly body: Uint8Array;
  /**
   * Whether the body is longer than `maxBytes`: its `Content-Length` said
   * so, or more bytes arrived.  The stream is cancelled then.
   */
  readonly truncated: boolean;
}

/**
 * Reads a body that another party sent, keeping at most `maxBytes` bytes in
 * memory.  Given a request or a response, it first trusts a
 * `Content-Length` above the limit and refuses without reading a byte;
 * then (and given a bare stream, at once) it reads chunk by chunk, counting,
 * and cancels the stream as soon as the count passes the limit, so a peer
 * that streams without end costs at most `maxBytes` plus one chunk.  Pass
 * the bare stream (`response.body`) to keep the first `maxBytes` bytes of
 * an oversized body instead of refusing on its declared length.
 * @param source A request or response whose body was not read, a body
 *               stream, or `null` (an empty body).
 * @param maxBytes The most bytes accepted, a non-negative safe integer.
 * @param options `signal` ends a pending read when aborted (not every
 *                runtime ends it when the request is aborted); the stream
 *                is cancelled and the signal's reason thrown.
 * @returns The body, or its first bytes and `truncated: true`.
 * @throws {TypeError} When the body was already read, or `maxBytes` is not a
 *         non-negative safe integer.
 * @throws {unknown} What the stream or the signal throws.
 * @internal
 * @since 0.3.0
 */
export async function readBodyCapped(
  source: Request | Response | ReadableStream<Uint8Array> | null,
  maxBytes: number,
  options: { readonly signal?: AbortSignal } = {},
): Promise<CappedBody> {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new TypeError(
      `readBodyCapped() needs a non-negative integer maxBytes; got ${String(maxBytes)}.`,
    );
  }
  let stream: ReadableStream<Uint8Array> | null;
  if (source == null || "getReader" in source) {
    stream = source;
  } else {
    if (source.bodyUsed) throw new TypeError("The body was already read.");
    stream = source.body;
    const declared = Number(source.headers.get("content-length") ?? NaN);
    if (declared > maxBytes) {
      // Not awaited, here and below: a peer's stream may take its time to
      // tear down, and nothing more is read from it.
      stream?.cancel().catch(() => {});
      return { body: new Uint8Array(), truncated: true };
    }
  }
  if (stream == null) return { body: new Uint8Array(), truncated: false };
  const reader = stream.getReader();
  const signal = options.signal;
  let onAbort: (() => void) | undefined;
  const aborted = signal == null ? undefined : new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new DOMException("Aborted", "AbortError"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted?.catch(() => {});
  const kept = new CappedChunks(maxBytes);
  let truncated = false;
  try {
    while (true) {
      const { done, value } =
        await (aborted == null ? reader.read() : Promise.race([reader.read(), aborted]));
      if (done) break;
      if (!kept.add(value)) {
        truncated = true;
        break;
      }
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    if (onAbort != null) signal!.removeEventListener("abort", onAbort);
  }
  if (truncated) reader.cancel().catch(() => {});
  return { body: kept.bytes(), truncated };
}

/**
 * The chunks of a body being read, kept up to `maxBytes` bytes: what
 * {@link readBodyCapped} and the Node.js HTTP client both collect.
 * @internal
 * @since 0.3.0
 */
export class CappedChunks {
  readonly #maxBytes: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  /** @param maxBytes The most bytes kept. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * Keeps `chunk`, or its part that fits.
   * @returns `false` when the chunk did not fit whole: the body is longer
   *          than `maxBytes`, and reading should stop.
   */
  add(chunk: Uint8Array): boolean {
    const room = this.#maxBytes - this.#size;
    if (chunk.byteLength > room) {
      if (room > 0) this.#chunks.push(chunk.subarray(0, room));
      this.#size = this.#maxBytes;
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
    return true;
  }

  /** The bytes kept, in one array of their own. */
  bytes(): Uint8Array {
    const body = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return body;
  }
}
