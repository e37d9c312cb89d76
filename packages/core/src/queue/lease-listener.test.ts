import { setImmediate } from "node:timers";
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  type Deferred,
  deferred,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import {
  type LeaseClaimRequest,
  type LeaseClaimResult,
  type LeasedMessage,
  type LeaseEngine,
  type LeaseListenerOptions,
  runLeaseListener,
} from "./lease-listener.ts";
import type { MessageQueueHandler, MessageRedelivery } from "./message-queue.ts";
import { QueueClosedError } from "./queue-closed-error.ts";

interface Row {
  payload: unknown;
  leased: boolean;
  readyAt: number;
  /** Hand-outs counted at claim time, as durable engines do. */
  deliveries: number;
}

interface MemoryMessage extends LeasedMessage {
  readonly id: number;
}

/**
 * A small engine over a Map, recording every call, so that the tests can
 * see what the listener asked for.  Each call completes after a macrotask,
 * like a round trip.
 */
class MemoryEngine implements LeaseEngine<MemoryMessage> {
  readonly rows = new Map<number, Row>();
  readonly claims: LeaseClaimRequest<MemoryMessage>[] = [];
  readonly claimed: number[][] = [];
  readonly releases: number[][] = [];
  readonly extensions: number[][] = [];
  readonly redeliveries: { id: number; payload: unknown; delayMs: number }[] = [];
  /** Makes the next claims reject with these errors, one each. */
  readonly failures: unknown[] = [];
  #nextId = 1;
  #wake: (() => void) | undefined;
  closed = false;
  /** Whether a claim takes a timer's turn (a round trip) or none. */
  instantClaims = false;

  add(...payloads: unknown[]): void {
    for (const payload of payloads) {
      this.rows.set(this.#nextId++, { payload, leased: false, readyAt: 0, deliveries: 0 });
    }
    this.#wake?.();
  }

  async claim(request: LeaseClaimRequest<MemoryMessage>): Promise<LeaseClaimResult<MemoryMessage>> {
    if (!this.instantClaims) await roundTrip();
    this.claims.push(request);
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    for (const message of request.acks) this.rows.delete(message.id);
    for (const message of request.handBacks) {
      const row = this.rows.get(message.id);
      if (row != null) row.leased = false;
    }
    const messages: MemoryMessage[] = [];
    for (const [id, row] of this.rows) {
      if (messages.length >= request.count) break;
      if (row.leased || row.readyAt > Date.now()) continue;
      row.leased = true;
      row.deliveries++;
      messages.push({ id, deliveryCount: row.deliveries });
    }
    this.claimed.push(messages.map((message) => message.id));
    return { messages };
  }

  async release(messages: readonly MemoryMessage[]): Promise<void> {
    await roundTrip();
    this.releases.push(messages.map((message) => message.id));
    for (const message of messages) {
      const row = this.rows.get(message.id);
      if (row == null) continue;
      row.leased = false;
      row.deliveries--;
    }
  }

  async extendLeases(messages: readonly MemoryMessage[]): Promise<void> {
    await roundTrip();
    this.extensions.push(messages.map((message) => message.id));
  }

  async redeliver(message: MemoryMessage, payload: unknown, delayMs: number): Promise<void> {
    await roundTrip();
    this.redeliveries.push({ id: message.id, payload, delayMs });
    const row = this.rows.get(message.id)!;
    row.payload = payload;
    row.leased = false;
    row.deliveries = 0;
    row.readyAt = Date.now() + delayMs;
  }

  decode(message: MemoryMessage): unknown {
    const payload = this.rows.get(message.id)!.payload;
    if (payload === "undecodable") throw new SyntaxError("not a message");
    return payload;
  }

  subscribe(wake: () => void): () => void {
    this.#wake = wake;
    return () => this.#wake = undefined;
  }

  close(): void {
    this.closed = true;
  }
}

function roundTrip(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

function options(
  overrides: Partial<LeaseListenerOptions> & { signal: AbortSignal },
): LeaseListenerOptions {
  return {
    concurrency: 1,
    prefetch: 0,
    heartbeatMs: 10_000,
    pollMs: 1_000,
    handBackDelayMs: 30_000,
    queueName: "the memory queue",
    ...overrides,
  };
}

test("runLeaseListener hands every message to the handler, in order at concurrency 1", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 30 }, (_, n) => ({ n })));
  const controller = new AbortController();
  const seen: number[] = [];
  const all = deferred();
  const listening = runLeaseListener(engine, (message: { n: number }) => {
    seen.push(message.n);
    if (seen.length === 30) all.resolve();
  }, options({ prefetch: 4, signal: controller.signal }));
  await within(all.promise, () => `30 messages; got ${seen.length}`);
  controller.abort();
  await listening;
  assertEquals(seen, Array.from({ length: 30 }, (_, n) => n));
  assertEquals(engine.rows.size, 0, "every message was acknowledged");
  assert(engine.closed, "the engine was closed");
});

test("runLeaseListener claims up to concurrency + prefetch messages and never runs more than concurrency", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 40 }, (_, n) => n));
  const controller = new AbortController();
  let running = 0;
  let maxRunning = 0;
  let handled = 0;
  const all = deferred();
  const listening = runLeaseListener(engine, async () => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    await roundTrip();
    running--;
    if (++handled === 40) all.resolve();
  }, options({ concurrency: 3, prefetch: 5, signal: controller.signal }));
  await within(all.promise, () => `40 messages; got ${handled}`);
  controller.abort();
  await listening;
  assertEquals(maxRunning, 3);
  assertEquals(engine.claims[0].count, 8, "the first claim asks for concurrency + prefetch");
  assert(engine.claims.every((claim) => claim.count <= 8), "no claim asks for more");
  assertEquals(engine.rows.size, 0);
});

test("runLeaseListener sends acknowledgements in batches with the next claim", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 50 }, (_, n) => n));
  const controller = new AbortController();
  let handled = 0;
  const all = deferred();
  const listening = runLeaseListener(engine, () => {
    if (++handled === 50) all.resolve();
  }, options({ prefetch: 16, signal: controller.signal }));
  await within(all.promise, () => `50 messages; got ${handled}`);
  controller.abort();
  await listening;
  const acked = engine.claims.flatMap((claim) => claim.acks.map((message) => message.id));
  assertEquals(acked.toSorted((a, b) => a - b), Array.from({ length: 50 }, (_, n) => n + 1));
  assert(
    engine.claims.some((claim) => claim.acks.length > 1 && claim.count > 0),
    "some claim round trip carried several acknowledgements",
  );
  assert(
    engine.claims.length < 50,
    `fewer round trips than messages; got ${engine.claims.length}`,
  );
});

test("runLeaseListener releases prefetched messages when it stops and acknowledges the running one", async () => {
  const engine = new MemoryEngine();
  engine.add("first", "second", "third", "fourth", "fifth", "sixth");
  const controller = new AbortController();
  const started = deferred();
  const finish = deferred();
  const seen: unknown[] = [];
  const listening = runLeaseListener(engine, async (message) => {
    seen.push(message);
    started.resolve();
    await finish.promise;
  }, options({ prefetch: 3, signal: controller.signal }));
  await within(started.promise, "the first handler");
  await waitUntil(() => engine.claimed.flat().length === 4, { what: "four messages claimed" });
  controller.abort();
  await waitUntil(() => engine.releases.length === 1, { what: "the prefetched messages released" });
  assertEquals(engine.releases[0], [2, 3, 4]);
  finish.resolve();
  await within(listening, "the listener to stop");
  assertEquals(seen, ["first"]);
  assertEquals([...engine.rows.keys()], [2, 3, 4, 5, 6], "the first message was acknowledged");
  assert([...engine.rows.values()].every((row) => !row.leased), "nothing stays leased");
});

test("runLeaseListener releases at once, uncounted, a message whose handler throws while it stops", async () => {
  const engine = new MemoryEngine();
  engine.add("interrupted");
  const controller = new AbortController();
  const started = deferred();
  const listening = runLeaseListener(engine, async () => {
    started.resolve();
    // Its worker shut down under it: the handler ends when the signal does.
    await new Promise<void>((_, reject) =>
      controller.signal.addEventListener("abort", () => reject(new Error("shut down")))
    );
  }, options({ signal: controller.signal }));
  await within(started.promise, "the handler");
  controller.abort();
  await within(listening, "the listener to stop");
  assertEquals(engine.releases, [[1]]);
  const handedBack = engine.claims.flatMap((claim) => claim.handBacks.map((message) => message.id));
  assertEquals(handedBack, [], "released, not handed back after the delay");
  const row = engine.rows.get(1)!;
  assertEquals({ leased: row.leased, deliveries: row.deliveries }, {
    leased: false,
    deliveries: 0,
  });
});

test("runLeaseListener's heartbeat covers prefetched messages as well as running ones", async () => {
  const engine = new MemoryEngine();
  engine.add("a", "b", "c", "d", "e");
  const controller = new AbortController();
  const finish = deferred();
  const listening = runLeaseListener(
    engine,
    () => finish.promise,
    options({ prefetch: 2, heartbeatMs: 5, signal: controller.signal }),
  );
  await waitUntil(
    () => engine.extensions.some((ids) => ids.toSorted().join() === "1,2,3"),
    {
      what: () => `a heartbeat over messages 1, 2 and 3; got ${JSON.stringify(engine.extensions)}`,
    },
  );
  controller.abort();
  finish.resolve();
  await within(listening, "the listener to stop");
});

test("runLeaseListener hands back a message whose handler threw and keeps listening", async () => {
  const engine = new MemoryEngine();
  engine.add("fails", "works");
  const controller = new AbortController();
  const attempts: unknown[] = [];
  const listening = runLeaseListener(engine, (message) => {
    attempts.push(message);
    if (message === "fails" && attempts.length === 1) throw new Error("boom");
  }, options({ signal: controller.signal }));
  await waitUntil(() => engine.rows.size === 0, { what: () => `both handled; got ${attempts}` });
  controller.abort();
  await listening;
  const handedBack = engine.claims.flatMap((claim) => claim.handBacks.map((message) => message.id));
  assertEquals(handedBack, [1]);
  assertEquals(attempts.filter((message) => message === "fails").length, 2);
});

test("runLeaseListener passes a MessageRedelivery that stores in place and checks its calls", async () => {
  const engine = new MemoryEngine();
  engine.add({ attempt: 1 });
  const controller = new AbortController();
  const checked = deferred<{ second: unknown; negative: unknown; late?: Promise<void> }>();
  let kept: MessageRedelivery | undefined;
  const handler: MessageQueueHandler = async (message: { attempt: number }, redelivery) => {
    if (message.attempt !== 1) return;
    kept = redelivery;
    const negative = await redelivery!.redeliver({ attempt: 2 }, { delay: { seconds: -1 } })
      .catch((error) => error);
    await redelivery!.redeliver({ attempt: 2 }, { delay: { seconds: 5 } });
    const second = await redelivery!.redeliver({ attempt: 3 }, { delay: { seconds: 5 } })
      .catch((error) => error);
    checked.resolve({ second, negative });
  };
  const listening = runLeaseListener(engine, handler, options({ signal: controller.signal }));
  const { second, negative } = await within(checked.promise, "the handler");
  assertInstanceOf(negative, RangeError);
  assertInstanceOf(second, TypeError);
  await waitUntil(() => engine.claims.length >= 2, { what: "another claim" });
  await assertRejects(
    () => kept!.redeliver({ attempt: 4 }, { delay: { seconds: 1 } }),
    TypeError,
    "already called",
  );
  controller.abort();
  await listening;
  assertEquals(engine.redeliveries, [{ id: 1, payload: { attempt: 2 }, delayMs: 5_000 }]);
  // Neither acknowledged nor handed back: the new version waits in place.
  assertEquals(engine.claims.flatMap((claim) => [...claim.acks, ...claim.handBacks]), []);
  assert(engine.rows.has(1));
});

test("runLeaseListener retries a failed claim with its acknowledgements", async () => {
  const engine = new MemoryEngine();
  engine.add("one");
  const controller = new AbortController();
  const handled = deferred();
  const listening = runLeaseListener(engine, () => {
    engine.failures.push(new Error("connection lost"));
    handled.resolve();
  }, options({ signal: controller.signal }));
  await within(handled.promise, "the handler");
  await waitUntil(() => engine.rows.size === 0, { what: "the acknowledgement to get through" });
  controller.abort();
  await listening;
  const withAck = engine.claims.filter((claim) => claim.acks.length > 0);
  assertEquals(withAck.length, 2, "sent once, failed, then sent again");
});

test("runLeaseListener stops when the engine reports a QueueClosedError", async () => {
  const engine = new MemoryEngine();
  engine.failures.push(new QueueClosedError("closed"));
  const listening = runLeaseListener(
    engine,
    () => {},
    options({ signal: new AbortController().signal }),
  );
  await within(listening, "the listener to stop");
  assertEquals(engine.claims.length, 1);
  assert(engine.closed);
});

test("runLeaseListener drops and acknowledges a message it cannot decode", async () => {
  const engine = new MemoryEngine();
  engine.add("undecodable", "fine");
  const controller = new AbortController();
  const seen: unknown[] = [];
  const listening = runLeaseListener(engine, (message) => {
    seen.push(message);
  }, options({ prefetch: 1, signal: controller.signal }));
  await waitUntil(() => engine.rows.size === 0, { what: "both acknowledged" });
  controller.abort();
  await listening;
  assertEquals(seen, ["fine"]);
});

test("runLeaseListener returns at once for an aborted signal after releasing nothing", async () => {
  const engine = new MemoryEngine();
  engine.add("waiting");
  const controller = new AbortController();
  controller.abort();
  await runLeaseListener(engine, () => {
    throw new Error("must not run");
  }, options({ signal: controller.signal }));
  assertEquals(engine.claims.length, 0);
  assertEquals(engine.releases.length, 0);
});

test("runLeaseListener sends an acknowledgement after ackDelayMs while prefetched messages keep it busy", async () => {
  const engine = new MemoryEngine();
  engine.add("quick", "slow", "c", "d", "e", "f", "g", "h", "i");
  const controller = new AbortController();
  const finish = deferred();
  const listening = runLeaseListener(engine, async (message) => {
    if (message !== "quick") await finish.promise;
  }, options({ prefetch: 8, ackDelayMs: 20, pollMs: 600_000, signal: controller.signal }));
  // Seven messages stay prefetched: one free place is less than half of
  // concurrency + prefetch, so only the deadline sends the first message's
  // acknowledgement.  The loop went to sleep before that message finished,
  // with nothing to acknowledge and a poll interval far longer than the
  // wait below: it must wake to set the deadline.
  await waitUntil(() => engine.claims.some((claim) => claim.acks.some((m) => m.id === 1)), {
    what: "the acknowledgement of the first message",
  });
  assert(!engine.rows.has(1));
  controller.abort();
  finish.resolve();
  await within(listening, "the listener to stop");
});

test("runLeaseListener claims further ahead, up to maxPrefetch, while quick handlers drain a backlog", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 400 }, (_, n) => n));
  const controller = new AbortController();
  let handled = 0;
  const all = deferred();
  const listening = runLeaseListener(engine, () => {
    if (++handled === 400) all.resolve();
  }, options({ concurrency: 2, prefetch: 4, maxPrefetch: 64, signal: controller.signal }));
  await within(all.promise, () => `400 messages; got ${handled}`);
  controller.abort();
  await listening;
  const counts = engine.claims.map((claim) => claim.count);
  assertEquals(counts[0], 6, "the first claim asks for concurrency + prefetch");
  assert(counts.some((count) => count > 6), `the claims grew: ${counts}`);
  assert(
    counts.every((count) => count <= 2 + 64),
    `never past concurrency + maxPrefetch: ${counts}`,
  );
  assertEquals(engine.rows.size, 0, "every message was acknowledged");
});

test("runLeaseListener claims further ahead when quick handlers get through the prefetched messages before a slot starves", async () => {
  const engine = new MemoryEngine();
  engine.instantClaims = true;
  engine.add(...Array.from({ length: 300 }, (_, n) => n));
  const controller = new AbortController();
  let handled = 0;
  const all = deferred();
  const listening = runLeaseListener(engine, async () => {
    // Quick, but each handler waits a turn of the event loop, by which
    // time the claim (no round trip at all) has come back: the slot never
    // runs out of prefetched work, so only the quick turnover can make it
    // grow.
    await new Promise((resolve) => setImmediate(resolve));
    if (++handled === 300) all.resolve();
  }, options({ concurrency: 1, prefetch: 4, maxPrefetch: 64, signal: controller.signal }));
  await within(all.promise, () => `300 messages; got ${handled}`);
  controller.abort();
  await listening;
  const counts = engine.claims.map((claim) => claim.count);
  assert(counts.some((count) => count > 5), `the claims grew: ${counts}`);
  assert(counts.every((count) => count <= 1 + 64), `never past maxPrefetch: ${counts}`);
  assertEquals(engine.rows.size, 0, "every message was acknowledged");
});

test("runLeaseListener goes back to its prefetch once a claim comes back short", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 200 }, (_, n) => n));
  const controller = new AbortController();
  let handled = 0;
  const drained = deferred();
  const more = deferred();
  const listening = runLeaseListener(engine, () => {
    handled++;
    if (handled === 200) drained.resolve();
    if (handled === 203) more.resolve();
  }, options({ concurrency: 1, prefetch: 2, maxPrefetch: 32, signal: controller.signal }));
  await within(drained.promise, () => `200 messages; got ${handled}`);
  assert(engine.claims.some((claim) => claim.count > 3), "the claims grew during the backlog");
  // The backlog is gone: a claim came back short, and the next ones ask
  // for concurrency + prefetch again.
  await waitUntil(() => engine.claims.at(-1)!.count <= 3, { what: "a claim back at 3" });
  const before = engine.claims.length;
  engine.add(1, 2, 3);
  await within(more.promise, () => `203 messages; got ${handled}`);
  controller.abort();
  await listening;
  const after = engine.claims.slice(before).filter((claim) => claim.count > 0);
  assert(after.length > 0 && after.every((claim) => claim.count <= 3), "back at the prefetch");
});

test("runLeaseListener never grows a prefetch of 0 or one that slow handlers leave waiting", async () => {
  for (const { prefetch, slow } of [{ prefetch: 0, slow: false }, { prefetch: 4, slow: true }]) {
    const engine = new MemoryEngine();
    engine.add(...Array.from({ length: 40 }, (_, n) => n));
    const controller = new AbortController();
    let handled = 0;
    const all = deferred();
    const listening = runLeaseListener(engine, async () => {
      if (slow) await new Promise((resolve) => setTimeout(resolve, 20));
      if (++handled === 40) all.resolve();
    }, options({ concurrency: 2, prefetch, maxPrefetch: 64, signal: controller.signal }));
    await within(all.promise, () => `40 messages; got ${handled}`);
    controller.abort();
    await listening;
    const counts = engine.claims.map((claim) => claim.count);
    assert(counts.every((count) => count <= 2 + prefetch), `prefetch ${prefetch}: ${counts}`);
  }
});

test("runLeaseListener hands the handler the engine's delivery count of each claim", async () => {
  const engine = new MemoryEngine();
  engine.add("fails twice", "redelivered");
  const controller = new AbortController();
  const seen: [unknown, number | undefined][] = [];
  const done = deferred();
  const listening = runLeaseListener(engine, async (message, redelivery) => {
    seen.push([message, redelivery?.deliveryCount]);
    if (message === "fails twice" && redelivery!.deliveryCount! <= 2) throw new Error("boom");
    if (message === "redelivered") {
      await redelivery!.redeliver("new version", { delay: { milliseconds: 0 } });
    }
    if (message === "new version") done.resolve();
  }, options({ signal: controller.signal, handBackDelayMs: 0 }));
  // The memory engine hands a handed-back message out again at once.
  await within(done.promise, "the redelivered version");
  controller.abort();
  await listening;
  assertEquals(seen.filter(([message]) => message === "fails twice").map(([, n]) => n), [1, 2, 3]);
  assertEquals(seen.filter(([message]) => message !== "fails twice").map(([, n]) => n), [1, 1]);
});

test("runLeaseListener starts another message in the slot of a handler that yields it, and counts it again once taken back", async () => {
  const engine = new MemoryEngine();
  engine.add(...Array.from({ length: 5 }, (_, n) => n));
  const controller = new AbortController();
  const started: number[] = [];
  const takeBacks: (() => void)[] = [];
  const release = deferred();
  const allStarted = deferred();
  let running = 0;
  let maxRunningWhileTaken = 0;
  const listening = runLeaseListener(engine, async (n: number, redelivery) => {
    started.push(n);
    running++;
    if (n < 4) {
      // Waits for companions without a slot, as a handleMany item does.
      takeBacks.push(redelivery!.yieldSlot!());
    } else {
      allStarted.resolve();
    }
    await release.promise;
    running--;
  }, options({ concurrency: 1, prefetch: 0, signal: controller.signal }));
  // Concurrency 1, and yet all five start: four gave their slots up.
  await within(allStarted.promise, () => `five handlers; started ${started}`);
  assertEquals(started, [0, 1, 2, 3, 4]);
  // Once taken back, the slots count again: nothing more starts while the
  // five run, though a sixth message is there.
  for (const takeBack of takeBacks) takeBack();
  engine.add(5);
  await roundTrip();
  await roundTrip();
  maxRunningWhileTaken = running;
  assertEquals(started.length, 5);
  release.resolve();
  await waitUntil(() => started.length === 6, { what: "the sixth message" });
  controller.abort();
  await listening;
  assertEquals(maxRunningWhileTaken, 5);
  assertEquals(engine.rows.size, 0, "every message was acknowledged");
});

test("runLeaseListener starts a short claim's messages before the engine's nextWake() answers, then sleeps as it says", async () => {
  // The answers come from the test, one per claim.
  const answers: Deferred<number | undefined>[] = [];
  class WaitingEngine extends MemoryEngine {
    override async claim(
      request: LeaseClaimRequest<MemoryMessage>,
    ): Promise<LeaseClaimResult<MemoryMessage>> {
      const result = await super.claim(request);
      const answer = deferred<number | undefined>();
      answers.push(answer);
      // waitMs is what the listener would use without nextWake().
      return { ...result, waitMs: 3_600_000, nextWake: () => answer.promise };
    }
  }
  const engine = new WaitingEngine();
  engine.add("first");
  const controller = new AbortController();
  const handled = deferred<void>();
  const listening = runLeaseListener(
    engine,
    () => handled.resolve(),
    options({ prefetch: 4, pollMs: 3_600_000, signal: controller.signal }),
  );
  try {
    // One message of the five asked for, and no answer about the wait yet.
    await within(handled.promise, "the handler, before nextWake() answered");
    assertEquals(answers.length, 1);
    // The finished handler woke the listener: it claims again with the
    // acknowledgement whatever the answer.
    answers[0].resolve(3_600_000);
    await waitUntil(() => answers.length === 2, { what: "the claim that acknowledges" });
    assertEquals(engine.claims[1].acks.map((m) => m.id), [1]);
    // Nothing wakes the listener now but the 1 ms it is told to sleep.
    answers[1].resolve(1);
    await waitUntil(() => answers.length === 3, { what: "a claim after the 1 ms answered" });
    // Woken while nextWake() has not answered: it claims at once.
    engine.add("second");
    await waitUntil(() => answers.length >= 4, { what: "a claim before nextWake() answered" });
    assertEquals(engine.claimed[3], [2]);
  } finally {
    controller.abort();
    for (const answer of answers) answer.resolve(undefined);
    await listening;
  }
});

test("runLeaseListener with a batchSize claims up to max(prefetch, batchSize) beyond its free slots", async () => {
  for (
    const { batchSize, prefetch, first } of [
      { batchSize: undefined, prefetch: 2, first: 3 },
      { batchSize: 10, prefetch: 2, first: 11 },
      { batchSize: 10, prefetch: 0, first: 11 },
      { batchSize: 2, prefetch: 6, first: 7 },
    ]
  ) {
    const engine = new MemoryEngine();
    engine.add(...Array.from({ length: 20 }, (_, n) => n));
    const controller = new AbortController();
    let handled = 0;
    const all = deferred();
    const listening = runLeaseListener(engine, () => {
      if (++handled === 20) all.resolve();
    }, options({ prefetch, signal: controller.signal, ...(batchSize && { batchSize }) }));
    await within(all.promise, () => `20 messages; got ${handled}`);
    controller.abort();
    await listening;
    assertEquals(engine.claims[0].count, first, `batchSize ${batchSize}, prefetch ${prefetch}`);
    assertEquals(engine.claimed[0].length, first);
  }
});

test("runLeaseListener rejects a batchSize that is not a positive integer, naming it", async () => {
  for (const batchSize of [0, -1, 1.5, Number.NaN]) {
    const engine = new MemoryEngine();
    const controller = new AbortController();
    const error = await assertRejects(
      () => runLeaseListener(engine, () => {}, options({ batchSize, signal: controller.signal })),
      RangeError,
    );
    assert(
      error.message.includes("batchSize option must be a positive integer"),
      error.message,
    );
    assertEquals(engine.claims.length, 0, "nothing was claimed");
  }
});
