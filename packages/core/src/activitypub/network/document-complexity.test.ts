import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import {
  checkDocumentComplexity,
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  resolveDocumentComplexityLimits,
} from "./document-complexity.ts";
import { SERVER_DOCUMENTS } from "./testdata/server-documents.ts";
import {
  contextBomb,
  deepContexts,
  manyValues,
  scopedTypeBomb,
} from "./testdata/hostile-documents.ts";

const AS = "https://www.w3.org/ns/activitystreams";

test("real servers' documents pass the default document limits", () => {
  for (const [name, document] of Object.entries(SERVER_DOCUMENTS)) {
    assertEquals(checkDocumentComplexity(document), null, name);
  }
});

test("a @context of many tiny inline contexts is refused by its entry count", () => {
  const violation = checkDocumentComplexity(contextBomb(12_000));
  assertEquals(violation?.limit, "maxContextEntries");
  assertEquals(violation?.max, 64);
  assert(violation?.message.includes("64 JSON-LD context entries"));
  // Every URL, inline context and null of a @context counts, nested ones too.
  const nested = { "@context": AS, object: { "@context": [AS, null, { a: "https://x/a" }] } };
  assertEquals(checkDocumentComplexity(nested, { maxContextEntries: 4 }), null);
  assertEquals(
    checkDocumentComplexity(nested, { maxContextEntries: 3 })?.limit,
    "maxContextEntries",
  );
});

test("inline context terms are counted across every context, scoped ones included", () => {
  const terms = (n: number, prefix: string) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `https://x/${i}`]));
  const document = {
    "@context": [AS, terms(600, "a")],
    object: { "@context": { b: { "@id": "https://x/b", "@context": terms(424, "c") } } },
  };
  // 600 + 1 + 424 = 1,025 terms, one over the default.
  assertEquals(checkDocumentComplexity(document)?.limit, "maxContextTerms");
  assertEquals(checkDocumentComplexity(document, { maxContextTerms: 1025 })?.limit, undefined);
});

test("uses of scoped contexts count toward the context work", () => {
  // The bundled data-integrity context gives DataIntegrityProof a scoped
  // context, processed again at every node of that type.
  assertEquals(checkDocumentComplexity(scopedTypeBomb(1_600))?.limit, "maxContextWork");
  assertEquals(checkDocumentComplexity(scopedTypeBomb(10)), null);
  // An inline term with a scoped context counts the same way, by its uses.
  const inline = {
    "@context": [AS, { T: { "@id": "https://x/T", "@context": { q: "https://x/q" } } }],
    attachment: Array.from({ length: 200 }, () => ({ type: "T", q: "v" })),
  };
  const violation = checkDocumentComplexity(inline);
  assertEquals(violation?.limit, "maxContextWork");
  assert(violation?.message.includes("200 uses of scoped contexts"), violation?.message);
});

test("each remaining limit refuses a document past it, and only past it", () => {
  assertEquals(checkDocumentComplexity(manyValues(5_000)), null);
  assertEquals(checkDocumentComplexity(manyValues(5_001))?.limit, "maxValues");
  assertEquals(checkDocumentComplexity(deepContexts(0, 64)), null);
  assertEquals(checkDocumentComplexity(deepContexts(0, 65))?.limit, "maxDepth");
  const long = { content: "x".repeat(512 * 1024) };
  assertEquals(checkDocumentComplexity(long), null);
  assertEquals(checkDocumentComplexity({ content: `${long.content}x` })?.limit, "maxStringLength");
  assertEquals(checkDocumentComplexity({ [`${long.content}x`]: 1 })?.limit, "maxStringLength");
});

test("checkDocumentComplexity() survives any depth and a cycle", () => {
  let deep: unknown = {};
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assertEquals(checkDocumentComplexity(deep)?.limit, "maxDepth");
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assertEquals(checkDocumentComplexity(cyclic, { maxDepth: 1_000_000 })?.limit, "maxValues");
});

test("document limits are checked when given", () => {
  assertEquals(resolveDocumentComplexityLimits(undefined), DEFAULT_DOCUMENT_COMPLEXITY_LIMITS);
  assertEquals(resolveDocumentComplexityLimits({ maxValues: 10 }).maxValues, 10);
  assertThrows(
    () => resolveDocumentComplexityLimits({ maxValues: 0 }, "remoteDocuments"),
    RangeError,
    "remoteDocuments.maxValues",
  );
  assertThrows(
    () => resolveDocumentComplexityLimits({ maxValue: 10 } as never, "remoteDocuments"),
    Error,
    "maxValues",
  );
  assertThrows(() => checkDocumentComplexity({}, { maxDepth: -1 }), RangeError, "maxDepth");
});
