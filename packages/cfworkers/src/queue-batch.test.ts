// processQueueBatch() on batches built by hand: which messages of a batch
// Cloudflare delivers together cannot be chosen with Miniflare, so these
// check the ordering lanes and the ack/retry calls directly.
import { assertEquals, assertRejects, test } from "@fedify/fixture";
import type { WorkersMessageBatch, WorkersQueueMessage } from "./bindings.ts";
import { processQueueBatch } from "./queue-consumer.ts";

interface FakeMessage extends WorkersQueueMessage {
  readonly calls: string[];
}

function message(id: string, body: unknown): FakeMessage {
  const calls: string[] = [];
  return {
    id,
    body,
    attempts: 1,
    calls,
    ack: () => calls.push("ack"),
    retry: (options) => calls.push(`retry ${options?.delaySeconds}`),
  };
}

function batch(...messages: FakeMessage[]): WorkersMessageBatch {
  return { queue: "test", messages };
}

test("processQueueBatch() runs the messages of a batch that share an ordering key in order", async () => {
  const order: string[] = [];
  let release!: () => void;
  const firstHeld = new Promise<void>((resolve) => release = resolve);
  const federation = {
    async processQueuedMessage(_: undefined, body: { id: string }) {
      order.push(`start ${body.id}`);
      // The first message of key "k" waits until the keyless one has run:
      // if the second "k" message did not wait for it, it would start here.
      if (body.id === "k1") await firstHeld;
      if (body.id === "free") release();
      order.push(`end ${body.id}`);
    },
  };
  const messages = [
    message("1", { id: "k1", orderingKey: "k" }),
    message("2", { id: "k2", orderingKey: "k" }),
    message("3", { id: "free" }),
  ];
  const results = await processQueueBatch(batch(...messages), {
    federation: federation as never,
    contextData: undefined,
  });
  assertEquals(order.indexOf("start k2") > order.indexOf("end k1"), true, order.join(", "));
  assertEquals(results.map((r) => r.result), ["acked", "acked", "acked"]);
  assertEquals(messages.map((m) => m.calls), [["ack"], ["ack"], ["ack"]]);
});

test("processQueueBatch() hands back with retry() only the message whose processing threw", async () => {
  const federation = {
    processQueuedMessage(_: undefined, body: { id: string }) {
      return body.id === "bad" ? Promise.reject(new Error("broken")) : Promise.resolve();
    },
  };
  const messages = [message("1", { id: "good" }), message("2", { id: "bad" })];
  const results = await processQueueBatch(batch(...messages), {
    federation: federation as never,
    contextData: undefined,
    retryDelay: { seconds: 90 },
  });
  assertEquals(results, [{ id: "1", result: "acked" }, { id: "2", result: "retried" }]);
  assertEquals(messages.map((m) => m.calls), [["ack"], ["retry 90"]]);
});

test("processQueueBatch() checks its options before touching a message", async () => {
  const untouched = message("1", {});
  const federation = { processQueuedMessage: () => Promise.resolve() };
  await assertRejects(
    () =>
      processQueueBatch(batch(untouched), {
        federation,
        contextData: undefined,
        retryDelay: { hours: 13 },
      } as never),
    RangeError,
    "12 hours",
  );
  await assertRejects(
    () => processQueueBatch(batch(untouched), { federation, contextDat: 1 } as never),
    TypeError,
    "did you mean contextData",
  );
  await assertRejects(
    () => processQueueBatch(batch(untouched), { contextData: undefined } as never),
    TypeError,
    "federation",
  );
  assertEquals(untouched.calls, []);
});

test("processQueueBatch() passes each message's attempts as its deliveryCount", async () => {
  const seen: [string, unknown][] = [];
  const federation = {
    processQueuedMessage(_: undefined, body: { id: string }, options?: { deliveryCount?: number }) {
      seen.push([body.id, options?.deliveryCount]);
      return Promise.resolve();
    },
  };
  const third = { ...message("3", { id: "third" }), attempts: 3 };
  // Not a count: passed on as unknown rather than refused.
  const odd = { ...message("4", { id: "odd" }), attempts: Number.NaN };
  await processQueueBatch(batch(message("1", { id: "first" }), third, odd), {
    federation: federation as never,
    contextData: undefined,
  });
  assertEquals(seen, [["first", 1], ["third", 3], ["odd", undefined]]);
});
