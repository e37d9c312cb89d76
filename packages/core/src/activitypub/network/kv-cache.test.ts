import { assert, assertEquals, assertThrows, startTestServer, test } from "@fedify/fixture";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFetchDocumentLoader } from "./document-loader.ts";
import { kvCache, loadWithoutStoring } from "./kv-cache.ts";

const loader = createFetchDocumentLoader({
  userAgent: "KvCacheTest/1.0",
  allowPrivateAddress: true,
});

function startServer() {
  return startTestServer((request) => {
    const { pathname } = new URL(request.url);
    const padding = pathname === "/big" ? "x".repeat(8192) : "";
    return new Response(JSON.stringify({ id: request.url, type: "Note", content: padding }), {
      headers: { "Content-Type": "application/activity+json" },
    });
  });
}

test("kvCache() answers a document from the store until its TTL passes", async () => {
  const server = await startServer();
  try {
    const kv = new MemoryKvStore();
    const load = kvCache({ loader, kv, rules: [[{ test: () => true }, { milliseconds: 200 }]] });
    const url = new URL("/notes/1", server.url).href;
    const first = await load(url);
    assertEquals(await load(url), first);
    assertEquals(server.requests.length, 1);
    assertEquals(await kv.get(["_fedwork", "remoteDocument", url]), first);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await load(url);
    assertEquals(server.requests.length, 2);
  } finally {
    await server.close();
  }
});

test("kvCache() stores neither documents past maxDocumentBytes nor URLs no rule matches", async () => {
  const server = await startServer();
  try {
    const kv = new MemoryKvStore();
    const cached = new URL("/notes/1", server.url).href;
    const big = new URL("/big", server.url).href;
    const load = kvCache({
      loader,
      kv,
      prefix: ["docs"],
      rules: [[cached, { minutes: 5 }], [new URL(big), { minutes: 5 }]],
      maxDocumentBytes: 4096,
    });
    const other = new URL("/notes/2", server.url).href;
    for (const url of [cached, cached, big, big, other, other]) await load(url);
    assertEquals(server.requests.map((request) => new URL(request.url).pathname), [
      "/notes/1",
      "/big",
      "/big",
      "/notes/2",
      "/notes/2",
    ]);
    assertEquals(await kv.get(["docs", big]), undefined);
  } finally {
    await server.close();
  }
});

test("kvCache() answers the well-known JSON-LD contexts without asking the loader", async () => {
  let calls = 0;
  const load = kvCache({
    loader: (url) => {
      calls++;
      return Promise.resolve({ contextUrl: null, documentUrl: url, document: {} });
    },
    kv: new MemoryKvStore(),
  });
  const context = await load("https://www.w3.org/ns/activitystreams");
  assertEquals(typeof context.document, "object");
  assertEquals(calls, 0);
});

test("kvCache() refuses a TTL past 30 days and a misspelt parameter", () => {
  const kv = new MemoryKvStore();
  assertThrows(
    () => kvCache({ loader, kv, rules: [["https://example.com/", { days: 31 }]] }),
    RangeError,
    "rules[0] TTL must be positive and at most 30 days",
  );
  assertThrows(
    // @ts-expect-error: a misspelt parameter
    () => kvCache({ loader, kv, rule: [] }),
    UnknownOptionError,
    "rules",
  );
});

test("kvCache() keeps at most maxTotalBytes stored, deleting the oldest documents first", async () => {
  await using server = await startServer();
  const kv = new MemoryKvStore();
  // Each /big document takes a little over 8 KiB: two fit, three do not.
  const load = kvCache({ loader, kv, prefix: ["docs"], maxTotalBytes: 20 * 1024 });
  const urls = [0, 1, 2, 3].map((n) => new URL(`/big?n=${n}`, server.url).href);
  for (const url of urls) await load(url);
  const kept = [];
  for (const url of urls) kept.push(await kv.get(["docs", url]) != null);
  assertEquals(kept, [false, false, true, true]);
  let total = 0;
  for await (const entry of kv.list(["docs"])) total += JSON.stringify(entry.value).length;
  assert(total <= 20 * 1024, `${total} bytes stored`);
  // The evicted document is fetched again, the kept one is not.
  await load(urls[3]);
  await load(urls[0]);
  assertEquals(server.requests.length, 5);
  assertThrows(
    () => kvCache({ loader, kv, maxTotalBytes: -1 }),
    RangeError,
    "maxTotalBytes",
  );
});

test("loadWithoutStoring() answers a cached copy but stores nothing it fetched", async () => {
  await using server = await startServer();
  const kv = new MemoryKvStore();
  const load = kvCache({ loader, kv });
  const fresh = new URL("/notes/1", server.url).href;
  const known = new URL("/notes/2", server.url).href;
  await load(known);
  await loadWithoutStoring(load, fresh);
  await loadWithoutStoring(load, known);
  assertEquals(await kv.get(["_fedwork", "remoteDocument", fresh]), undefined);
  assertEquals(server.requests.map((request) => new URL(request.url).pathname), [
    "/notes/2",
    "/notes/1",
  ]);
  // A loader that is no kvCache() is simply called.
  assertEquals((await loadWithoutStoring(loader, fresh)).documentUrl, fresh);
});
