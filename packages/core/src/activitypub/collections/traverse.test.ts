import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  startTestServer,
  test,
  type TestServer,
  withLogs,
} from "@fedify/fixture";
import { Collection, Note, OrderedCollection } from "@fedify/vocab";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFetchDocumentLoader } from "../network/document-loader.ts";
import {
  PrivateAddressError,
  RemoteBodyTooLargeError,
  RemoteTimeoutError,
} from "../network/errors.ts";
import { startHostileServer } from "../network/testdata/hostile-server.ts";
import {
  CollectionTraversalError,
  DEFAULT_TRAVERSE_MAX_REQUESTS,
  traverseCollection,
} from "./traverse.ts";

const AS = "https://www.w3.org/ns/activitystreams";

/**
 * A remote server on loopback: `/outbox` has three pages of two notes;
 * `/endless` has pages whose `next` never ends; `/circle` has two pages
 * linking to each other; `/huge` has a first page too big to read;
 * `/many` has one page listing 20,000 notes by URL, and `/dead-links` one
 * listing 20,000 URLs that answer 404.
 */
function startRemote(): Promise<TestServer> {
  return startTestServer((request) => {
    const url = new URL(request.url);
    const origin = url.origin;
    const page = Number(url.searchParams.get("page") ?? "0");
    const json = (document: unknown) =>
      new Response(JSON.stringify({ "@context": AS, ...document as object }), {
        headers: { "Content-Type": "application/activity+json" },
      });
    const note = (n: number) => ({ type: "Note", id: `${origin}/notes/${n}`, content: `${n}` });
    switch (url.pathname) {
      case "/outbox":
        return json({
          id: `${origin}/outbox?page=${page}`,
          type: "OrderedCollectionPage",
          partOf: `${origin}/outbox`,
          orderedItems: [note(page * 2 + 1), note(page * 2 + 2)],
          ...(page < 3 ? { next: `${origin}/outbox?page=${page + 1}` } : {}),
        });
      case "/endless":
        return json({
          id: `${origin}/endless?page=${page}`,
          type: "OrderedCollectionPage",
          orderedItems: [note(page)],
          next: `${origin}/endless?page=${page + 1}`,
        });
      case "/circle":
        return json({
          id: `${origin}/circle?page=${page}`,
          type: "OrderedCollectionPage",
          orderedItems: [note(page)],
          next: `${origin}/circle?page=${page === 1 ? 2 : 1}`,
        });
      case "/huge":
        return json({
          id: `${origin}/huge?page=1`,
          type: "OrderedCollectionPage",
          orderedItems: Array.from({ length: 5000 }, (_, i) => note(i)),
        });
      case "/many":
      case "/dead-links":
        return json({
          id: `${origin}${url.pathname}?page=1`,
          type: "OrderedCollectionPage",
          orderedItems: Array.from(
            { length: 20_000 },
            (_, i) => `${origin}/${url.pathname === "/many" ? "notes" : "gone"}/${i}`,
          ),
        });
    }
    if (url.pathname.startsWith("/notes/")) return json(note(Number(url.pathname.slice(7))));
    return new Response("not found", { status: 404 });
  });
}

const loader = (maxBodyBytes?: number) =>
  createFetchDocumentLoader({
    userAgent: "FedworkTest/1.0",
    allowPrivateAddress: true,
    ...(maxBodyBytes == null ? {} : { maxBodyBytes }),
  });

function pagedCollection(server: TestServer, path: string): OrderedCollection {
  return new OrderedCollection({
    id: new URL(path, server.url),
    first: new URL(`${path}?page=1`, server.url),
  });
}

async function collect(iterable: AsyncIterable<{ id: URL | null }>): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of iterable) ids.push(new URL(item.id!).pathname);
  return ids;
}

test("traverseCollection() follows first and next through the document loader", async () => {
  await using server = await startRemote();
  const items = await collect(
    traverseCollection(pagedCollection(server, "/outbox"), { documentLoader: loader() }),
  );
  assertEquals(items, ["/notes/3", "/notes/4", "/notes/5", "/notes/6", "/notes/7", "/notes/8"]);
  assertEquals(server.requests.map((request) => new URL(request.url).search), [
    "?page=1",
    "?page=2",
    "?page=3",
  ]);
  assertEquals(server.requests[0].headers.get("user-agent"), "FedworkTest/1.0");
});

test("traverseCollection() yields an unpaged collection's items and fetches those given by URL", async () => {
  await using server = await startRemote();
  const collection = new Collection({
    id: new URL("/liked", server.url),
    items: [
      new Note({ id: new URL("/notes/1", server.url), content: "one" }),
      new URL("/notes/7", server.url),
    ],
  });
  const items: unknown[] = [];
  for await (const item of traverseCollection(collection, { documentLoader: loader() })) {
    items.push(item);
  }
  assertEquals(items.length, 2);
  assertInstanceOf(items[1], Note);
  assertEquals((items[1] as Note).content?.toString(), "7");
  assertEquals(server.requests.length, 1);
});

test("an endless next chain ends at maxPages with a CollectionTraversalError", async () => {
  await using server = await startRemote();
  const seen: string[] = [];
  const error = await assertRejects(async () => {
    const pages = traverseCollection(pagedCollection(server, "/endless"), {
      documentLoader: loader(),
      maxPages: 5,
    });
    for await (const item of pages) seen.push(item.id!.href);
  }, CollectionTraversalError);
  assert(error.message.includes("more than 5 pages"), error.message);
  assert(error.message.includes("maxPages"), "the message names the option");
  assertEquals(seen.length, 5);
  assertEquals(server.requests.length, 5);
});

test("an endless next chain ends at the default bound of 100 pages", async () => {
  await using server = await startRemote();
  let count = 0;
  await assertRejects(async () => {
    const pages = traverseCollection(pagedCollection(server, "/endless"), {
      documentLoader: loader(),
    });
    for await (const _ of pages) count++;
  }, CollectionTraversalError);
  assertEquals(count, 100);
  assertEquals(server.requests.length, 100);
});

test("pages whose next links go round end the traversal instead of looping", async () => {
  await using server = await startRemote();
  const seen: string[] = [];
  await assertRejects(
    async () => {
      const pages = traverseCollection(pagedCollection(server, "/circle"), {
        documentLoader: loader(),
      });
      for await (const item of pages) seen.push(new URL(item.id!).pathname);
    },
    CollectionTraversalError,
    "links back",
  );
  assertEquals(seen, ["/notes/1", "/notes/2"]);
});

test("maxItems bounds the items yielded", async () => {
  await using server = await startRemote();
  const seen: string[] = [];
  await assertRejects(
    async () => {
      const pages = traverseCollection(pagedCollection(server, "/outbox"), {
        documentLoader: loader(),
        maxItems: 3,
      });
      for await (const item of pages) seen.push(item.id!.href);
    },
    CollectionTraversalError,
    "more than 3 items",
  );
  assertEquals(seen.length, 3);
});

test("with suppressError, a bound ends the traversal with a warning instead of an error", async () => {
  await using server = await startRemote();
  await withLogs(async (records) => {
    const items = await collect(
      traverseCollection(pagedCollection(server, "/endless"), {
        documentLoader: loader(),
        maxPages: 3,
        suppressError: true,
      }),
    );
    assertEquals(items.length, 3);
    const warning = records.find((record) =>
      record.level === "warning" && record.category.join(".") === "fedwork.activitypub.collections"
    );
    assert(warning != null, "a warning is logged");
    assertEquals(warning.properties.collectionId, new URL("/endless", server.url).href);
  });
});

test("with suppressError, a page that cannot be fetched ends the traversal with a warning", async () => {
  await using server = await startRemote();
  await withLogs(async (records) => {
    const collection = new OrderedCollection({
      id: new URL("/outbox", server.url),
      first: new URL("/missing?page=1", server.url),
    });
    const items = await collect(
      traverseCollection(collection, { documentLoader: loader(), suppressError: true }),
    );
    assertEquals(items, []);
    const warning = records.find((record) =>
      record.level === "warning" && record.category.join(".") === "fedwork.activitypub.collections"
    );
    assert(warning != null, "a warning is logged under fedwork");
    assert(String(warning.properties.reason).includes("404"), String(warning.properties.reason));
  });
});

test("a page too big for the loader fails with the loader's error", async () => {
  await using server = await startRemote();
  await assertRejects(async () => {
    const pages = traverseCollection(pagedCollection(server, "/huge"), {
      documentLoader: loader(4096),
    });
    for await (const _ of pages) { /* nothing */ }
  }, RemoteBodyTooLargeError);
});

test("a page that never comes ends the traversal at the loader's time limit", async () => {
  await using tarpit = await startHostileServer({ kind: "hang" });
  const collection = new OrderedCollection({
    id: new URL("/outbox", tarpit.url),
    first: new URL("/outbox?page=1", tarpit.url),
  });
  const documentLoader = createFetchDocumentLoader({
    userAgent: "FedworkTest/1.0",
    allowPrivateAddress: true,
    timeout: { milliseconds: 200 },
  });
  await assertRejects(async () => {
    for await (const _ of traverseCollection(collection, { documentLoader })) { /* nothing */ }
  }, RemoteTimeoutError);
  assertEquals(tarpit.requests, 1);
});

test("without a document loader, traverseCollection() refuses private addresses", async () => {
  await using server = await startRemote();
  await assertRejects(async () => {
    for await (const _ of traverseCollection(pagedCollection(server, "/outbox"))) { /* nothing */ }
  }, PrivateAddressError);
  assertEquals(server.requests.length, 0);
});

test("traverseCollection() checks its options when called", () => {
  const collection = new OrderedCollection({ id: new URL("https://remote.example/c") });
  assertThrows(
    () => traverseCollection(collection, { maxPage: 3 } as never),
    UnknownOptionError,
    "did you mean maxPages?",
  );
  assertThrows(() => traverseCollection(collection, { maxPages: 0 }), RangeError, "maxPages");
  assertThrows(() => traverseCollection(collection, { maxItems: 1.5 }), RangeError, "maxItems");
  assertThrows(
    () => traverseCollection(collection, { maxRequests: 0 }),
    RangeError,
    "maxRequests",
  );
  assertThrows(
    () => traverseCollection(collection, { timeout: { seconds: 0 } }),
    RangeError,
    "timeout",
  );
  assertThrows(
    () => traverseCollection(collection, { signal: "stop" as never }),
    TypeError,
    "signal",
  );
  assertThrows(
    () => traverseCollection({ id: null } as never),
    TypeError,
    "must be a Collection",
  );
});

test("a page listing 20,000 item URLs makes at most 500 requests by default, then throws", async () => {
  await using server = await startRemote();
  let count = 0;
  const error = await assertRejects(async () => {
    const items = traverseCollection(pagedCollection(server, "/many"), {
      documentLoader: loader(),
    });
    for await (const _ of items) count++;
  }, CollectionTraversalError);
  assert(error.message.includes("more than 500 requests"), error.message);
  assert(error.message.includes("maxRequests"), "the message names the option");
  assertEquals(DEFAULT_TRAVERSE_MAX_REQUESTS, 500);
  // The page and 499 items.
  assertEquals(server.requests.length, 500);
  assertEquals(count, 499);
});

test("with suppressError, item URLs that fail stop at maxRequests with one warning", async () => {
  await using server = await startRemote();
  await withLogs(async (records) => {
    const items = await collect(
      traverseCollection(pagedCollection(server, "/dead-links"), {
        documentLoader: loader(),
        maxRequests: 50,
        suppressError: true,
      }),
    );
    assertEquals(items, []);
    assertEquals(server.requests.length, 50);
    const warnings = records.filter((record) =>
      record.level === "warning" && record.category.join(".") === "fedwork.activitypub.collections"
    );
    assertEquals(warnings.length, 1);
    assert(String(warnings[0].properties.reason).includes("maxRequests"));
    // The 19,951 items past the bound are not tried (and not logged) one by one.
    assert(records.length < 100, `${records.length} log records`);
  });
});

test("a traversal that outlasts its timeout is aborted with a CollectionTraversalError", async () => {
  await using tarpit = await startHostileServer({ kind: "hang" });
  const collection = new OrderedCollection({
    id: new URL("/outbox", tarpit.url),
    first: new URL("/outbox?page=1", tarpit.url),
  });
  // The loader alone would wait 10 seconds.
  const error = await assertRejects(async () => {
    const items = traverseCollection(collection, {
      documentLoader: loader(),
      timeout: { milliseconds: 300 },
    });
    for await (const _ of items) { /* nothing */ }
  }, CollectionTraversalError);
  assert(error.message.includes("more than 300 ms"), error.message);
  assert(error.message.includes("timeout"), "the message names the option");
  assertEquals(tarpit.requests, 1);
  // The request under way was aborted, not left open.
  await tarpit.waitForClosed(1);
});

test("the timeout counts the traversal's own time, not the consumer's", async () => {
  await using server = await startRemote();
  const items: string[] = [];
  for await (
    const item of traverseCollection(pagedCollection(server, "/outbox"), {
      documentLoader: loader(),
      timeout: { seconds: 2 },
    })
  ) {
    items.push(item.id!.href);
    // Longer than the timeout; the three pages' own fetches take far less.
    if (items.length === 1) await new Promise((resolve) => setTimeout(resolve, 2500));
  }
  assertEquals(items.length, 6);
});

test("the signal option aborts a traversal, even with suppressError", async () => {
  await using server = await startRemote();
  const before = AbortSignal.abort(new Error("not wanted"));
  await assertRejects(
    async () => {
      const items = traverseCollection(pagedCollection(server, "/outbox"), {
        documentLoader: loader(),
        signal: before,
      });
      for await (const _ of items) { /* nothing */ }
    },
    Error,
    "not wanted",
  );
  assertEquals(server.requests.length, 0);

  const controller = new AbortController();
  const seen: string[] = [];
  await assertRejects(
    async () => {
      const items = traverseCollection(pagedCollection(server, "/many"), {
        documentLoader: loader(),
        signal: controller.signal,
        suppressError: true,
      });
      for await (const item of items) {
        seen.push(item.id!.href);
        if (seen.length === 3) controller.abort(new Error("enough"));
      }
    },
    Error,
    "enough",
  );
  assertEquals(seen.length, 3);
  // The page and the three items.
  assertEquals(server.requests.length, 4);
});

test("a tarpit that is aborted by the signal frees its connection", async () => {
  await using tarpit = await startHostileServer({ kind: "hang" });
  const collection = new OrderedCollection({
    id: new URL("/outbox", tarpit.url),
    first: new URL("/outbox?page=1", tarpit.url),
  });
  const controller = new AbortController();
  const iteration = (async () => {
    for await (
      const _ of traverseCollection(collection, {
        documentLoader: loader(),
        signal: controller.signal,
      })
    ) { /* nothing */ }
  })();
  await tarpitRequested(tarpit);
  controller.abort(new Error("shutting down"));
  await assertRejects(() => iteration, Error, "shutting down");
  await tarpit.waitForClosed(1);
});

/** Resolves once the tarpit has received a request. */
async function tarpitRequested(tarpit: { readonly requests: number }): Promise<void> {
  // The hostile server has no request event; poll its counter.
  while (tarpit.requests === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}
