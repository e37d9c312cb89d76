// Documents a hostile peer sends to make JSON-LD processing expensive, for
// the document limits' tests, the hostile-peer tests and the benchmark.
const AS = "https://www.w3.org/ns/activitystreams";

function activity(context: unknown, object: Record<string, unknown> = {}) {
  return {
    "@context": context,
    id: "https://attacker.example/activities/1",
    type: "Create",
    actor: "https://attacker.example/users/mallory",
    object: {
      id: "https://attacker.example/notes/1",
      type: "Note",
      attributedTo: "https://attacker.example/users/mallory",
      content: "hi",
      ...object,
    },
  };
}

/**
 * The context bomb: a `@context` of `n` tiny inline contexts, each defining
 * one term; jsonld.js's cost grows with n² (n = 12,000 is 495 KiB).
 */
export function contextBomb(n: number) {
  const context: unknown[] = [AS];
  for (let i = 0; i < n; i++) context.push({ [`t${i}`]: `https://attacker.example/ns#t${i}` });
  return activity(context);
}

/**
 * `uses` nodes typed `DataIntegrityProof`, whose scoped context (from the
 * bundled data-integrity context) is processed at each of them.
 */
export function scopedTypeBomb(uses: number) {
  return activity([AS, "https://w3id.org/security/data-integrity/v1"], {
    attachment: Array.from({ length: uses }, () => ({ type: "DataIntegrityProof" })),
  });
}

/** An object with `n` JSON values in all (itself and `n - 1` strings). */
export function manyValues(n: number) {
  return { to: Array.from({ length: n - 2 }, (_, i) => `https://b.example/users/u${i}`) };
}

/**
 * A note `depth` levels deep: nested objects, each with an inline context
 * of one term when `contexts` is positive (at most `contexts` of them).
 */
export function deepContexts(contexts: number, depth: number) {
  let node: Record<string, unknown> = { type: "Note" };
  for (let level = depth - 1; level > 0; level--) {
    node = level <= contexts
      ? { "@context": { [`d${level}`]: `https://attacker.example/ns#d${level}` }, inReplyTo: node }
      : { inReplyTo: node };
  }
  return node;
}
