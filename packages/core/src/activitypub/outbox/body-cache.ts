import { SignedBody } from "../signatures/signed-body.ts";

/**
 * How many distinct activity bodies are kept, and how large they may be
 * together.  A fan-out sends one body to every inbox, one delivery after
 * another or a few at once, so a handful of entries covers the fan-outs a
 * process has in flight; the byte bound keeps large activities from
 * pinning memory.
 */
const MAX_ENTRIES = 16;
const MAX_TOTAL_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();
const bodies = new Map<string, SignedBody>();
let totalBytes = 0;

/**
 * The body of a delivery of this activity JSON, shared with the other
 * deliveries of the same JSON made lately, so that its bytes are encoded
 * and its digest hashed once per fan-out rather than once per inbox.  A
 * small least-recently-used cache; a body larger than the byte bound is
 * made afresh each time.
 *
 * Written by hand: a two-field LRU over a `Map`'s insertion order is
 * smaller than any cache library's set-up.
 */
export function signedBodyOf(json: string): SignedBody {
  const cached = bodies.get(json);
  if (cached != null) {
    // Move to the most recent end.
    bodies.delete(json);
    bodies.set(json, cached);
    return cached;
  }
  const body = new SignedBody(encoder.encode(json));
  const size = body.bytes.byteLength;
  if (size > MAX_TOTAL_BYTES / 4) return body;
  bodies.set(json, body);
  totalBytes += size;
  for (const [key, entry] of bodies) {
    if (bodies.size <= MAX_ENTRIES && totalBytes <= MAX_TOTAL_BYTES) break;
    bodies.delete(key);
    totalBytes -= entry.bytes.byteLength;
  }
  return body;
}
