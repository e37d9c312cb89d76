// Wake-ups within one process (local-wake.ts): an enqueue wakes the
// listeners of the same queue in this process without pub/sub, and a
// wake-up published by another process still reaches them.
import { assertEquals, deferred, test, waitUntil, within } from "@fedify/fixture";
import { Redis } from "ioredis";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisMessageQueue } from "./message-queue.ts";
import { queueKeys } from "./scripts/message-queue.ts";
import { claimScript, enqueueScript } from "./scripts/message-queue.ts";

function uniqueName(): string {
  return `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** Clients whose subscriptions never happen: no pub/sub wake-up arrives. */
function deafClient(): Redis {
  const client = new Redis(REDIS_URL);
  // deno-lint-ignore no-explicit-any
  (client as any).subscribe = () => Promise.resolve(1);
  return client;
}

/**
 * Starts a listener that polls once an hour, hands it one message and
 * waits until it has acknowledged it, so that it is idle: asleep until a
 * wake-up.  Returns what its handler gets from then on.
 */
async function idleListener(
  queue: RedisMessageQueue,
  signal: AbortSignal,
): Promise<{ next: () => Promise<unknown>; listening: Promise<void> }> {
  let waiting = deferred<unknown>();
  const listening = queue.listen((message) => waiting.resolve(message), { signal });
  await queue.enqueue("first");
  assertEquals(await within(waiting.promise, "the first message"), "first");
  waiting = deferred<unknown>();
  await waitUntil(async () => (await queue.getDepth()).queued === 0, {
    what: "the first message to be acknowledged",
  });
  return {
    next: () => within(waiting.promise, "the next message"),
    listening,
  };
}

/**
 * Runs `body` with a consumer whose clients `createClient` makes (polling
 * once an hour) and a producer: two instances on one queue in this
 * process, as a federation's enqueuing side and its worker usually are.
 * Stops the listener `body` starts with `signal` and cleans up.
 */
async function withLocalPair(
  createClient: () => Redis,
  body: (
    consumer: RedisMessageQueue,
    producer: RedisMessageQueue,
    signal: AbortSignal,
  ) => Promise<{ readonly listening: Promise<void> }>,
): Promise<void> {
  const name = uniqueName();
  const controller = new AbortController();
  const consumer = new RedisMessageQueue({ createClient, queue: name, pollInterval: { hours: 1 } });
  const producer = new RedisMessageQueue({ url: REDIS_URL, queue: name });
  try {
    const { listening } = await body(consumer, producer, controller.signal);
    controller.abort();
    await within(listening, "listen() to resolve");
  } finally {
    controller.abort();
    await producer[Symbol.asyncDispose]();
    await consumer[Symbol.asyncDispose]();
    await deleteKeys(`{fedwork:${name}}`);
  }
}

test("RedisMessageQueue wakes a listener of the same process without pub/sub or polling", async () => {
  await withLocalPair(deafClient, async (consumer, producer, signal) => {
    const { next, listening } = await idleListener(consumer, signal);
    await producer.enqueue("second");
    assertEquals(await next(), "second");
    return { listening };
  });
});

test("RedisMessageQueue still wakes on a wake-up another process published", async () => {
  const name = uniqueName();
  const controller = new AbortController();
  const consumer = new RedisMessageQueue({
    url: REDIS_URL,
    queue: name,
    pollInterval: { hours: 1 },
  });
  const other = new Redis(REDIS_URL);
  try {
    const { next, listening } = await idleListener(consumer, controller.signal);
    // What another process's enqueue does: the script alone, publishing
    // that process's origin, with no local wake-up here.
    const k = queueKeys("fedwork", name);
    await enqueueScript.run(
      other,
      [k.ready, k.delayed, k.msg, k.okey, k.seq],
      [k.base, 0, "", 0, "fedwork:another-process", JSON.stringify("second")],
    );
    assertEquals(await next(), "second");
    controller.abort();
    await within(listening, "listen() to resolve");
  } finally {
    controller.abort();
    other.disconnect();
    await consumer[Symbol.asyncDispose]();
    await deleteKeys(`{fedwork:${name}}`);
  }
});

test("RedisMessageQueue claims once for an enqueue of its own process, ignoring the pub/sub copy", async () => {
  let claims = 0;
  /**
   * Clients that count the claim script's runs and hand pub/sub messages
   * over 100 ms late: the copy of a local wake-up then arrives once the
   * listener has claimed, run and acknowledged the message and is idle
   * again, where a listener that heeded it would claim once more.
   */
  const countingClient = (): Redis => {
    const client = new Redis(REDIS_URL);
    const evalsha = client.evalsha.bind(client) as (...args: unknown[]) => Promise<unknown>;
    // deno-lint-ignore no-explicit-any
    (client as any).evalsha = (sha: string, ...rest: unknown[]) => {
      if (sha === claimScript.sha1) claims++;
      return evalsha(sha, ...rest);
    };
    const on = client.on.bind(client);
    // deno-lint-ignore no-explicit-any
    (client as any).on = (event: string, listener: (...args: any[]) => void) =>
      on(
        event,
        event === "message"
          ? (...args: unknown[]) => setTimeout(() => listener(...args), 100)
          : listener,
      );
    return client;
  };
  await withLocalPair(countingClient, async (consumer, producer, signal) => {
    const { next, listening } = await idleListener(consumer, signal);
    // The first message's late pub/sub copy, if any, has come and gone.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = claims;
    await producer.enqueue("second");
    assertEquals(await next(), "second");
    await waitUntil(async () => (await consumer.getDepth()).queued === 0, {
      what: "the second message to be acknowledged",
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One claim that took it, one that acknowledged it (and found nothing).
    assertEquals(claims - before, 2);
    return { listening };
  });
});
