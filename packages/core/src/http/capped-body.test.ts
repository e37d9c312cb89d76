import { assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { readBodyCapped } from "./capped-body.ts";

/** A stream of the given chunks that records whether it was cancelled. */
function chunked(...chunks: number[][]): {
  stream: ReadableStream<Uint8Array>;
  cancelled: Promise<void>;
} {
  const cancelled = deferred();
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < chunks.length) controller.enqueue(new Uint8Array(chunks[next++]));
      else controller.close();
    },
    cancel() {
      cancelled.resolve();
    },
  }, { highWaterMark: 0 });
  return { stream, cancelled: cancelled.promise };
}

test("readBodyCapped returns a body within the limit whole, in however many chunks", async () => {
  const { stream } = chunked([1, 2], [3], [4, 5]);
  assertEquals(await readBodyCapped(stream, 5), {
    body: new Uint8Array([1, 2, 3, 4, 5]),
    truncated: false,
  });
  assertEquals(await readBodyCapped(null, 0), { body: new Uint8Array(), truncated: false });
  assertEquals(
    await readBodyCapped(new Response("hello"), 5),
    { body: new TextEncoder().encode("hello"), truncated: false },
  );
});

test("readBodyCapped keeps a bare stream's first maxBytes and cancels the rest", async () => {
  const { stream, cancelled } = chunked([1, 2], [3, 4], [5, 6]);
  assertEquals(await readBodyCapped(stream, 3), {
    body: new Uint8Array([1, 2, 3]),
    truncated: true,
  });
  await within(cancelled, "the stream to be cancelled");
});

test("readBodyCapped refuses a message on its Content-Length without reading it", async () => {
  const { stream, cancelled } = chunked([1, 2, 3, 4]);
  const response = new Response(stream, { headers: { "Content-Length": "4" } });
  assertEquals(await readBodyCapped(response, 3), { body: new Uint8Array(), truncated: true });
  await within(cancelled, "the stream to be cancelled");
});

test("readBodyCapped throws the signal's reason and cancels the stream when aborted", async () => {
  const cancelled = deferred();
  // A peer that sends nothing and never closes.
  const stream = new ReadableStream<Uint8Array>({
    cancel() {
      cancelled.resolve();
    },
  });
  const controller = new AbortController();
  const reading = readBodyCapped(stream, 10, { signal: controller.signal });
  controller.abort(new Error("gave up"));
  await assertRejects(() => reading, Error, "gave up");
  await within(cancelled.promise, "the stream to be cancelled");
});

test("readBodyCapped refuses a body already read and an invalid maxBytes", async () => {
  const request = new Request("https://example.com/", { method: "POST", body: "x" });
  await request.text();
  await assertRejects(() => readBodyCapped(request, 10), TypeError, "already read");
  await assertRejects(() => readBodyCapped(null, -1), TypeError, "maxBytes");
});
