import {
  assert,
  assertEquals,
  assertRejects,
  assertThrows,
  startTestServer,
  test,
  waitUntil,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import type { OutboxMessage } from "./messages.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { fanOutDirectly, resolveFanoutDeliveries } from "./fanout.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import { loopbackFederation, withWorkers } from "../../federation/testdata/test-support.ts";

function deliveries(count: number): OutboxMessage[] {
  return Array.from(
    { length: count },
    (_, i) => ({ inbox: `https://s${i}.example/inbox` }),
  ) as unknown as OutboxMessage[];
}

test("fanOutDirectly() attempts deliveries so many at a time and enqueues nothing when all started", async () => {
  let running = 0;
  let most = 0;
  const attempted: string[] = [];
  const enqueued: OutboxMessage[][] = [];
  const result = await fanOutDirectly(deliveries(10), {
    concurrency: 3,
    budgetMs: 60_000,
    signal: new AbortController().signal,
    deliver: async (message) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      attempted.push(message.inbox);
      running--;
    },
    enqueue: (rest) => Promise.resolve(void enqueued.push(rest)),
  });
  assertEquals(result, { attempted: 10, enqueued: 0 });
  assertEquals(most, 3);
  assertEquals(attempted.length, 10);
  assertEquals(enqueued, []);
});

test("fanOutDirectly() enqueues what the budget left, and the deliveries whose retry was not stored", async () => {
  let clock = 0;
  const enqueued: string[] = [];
  const result = await fanOutDirectly(deliveries(6), {
    concurrency: 1,
    budgetMs: 100,
    signal: new AbortController().signal,
    now: () => clock,
    deliver: (message) => {
      clock += 40;
      return message.inbox === "https://s1.example/inbox"
        ? Promise.reject(new Error("retry not stored"))
        : Promise.resolve();
    },
    enqueue: (rest) => Promise.resolve(void enqueued.push(...rest.map((m) => m.inbox))),
  });
  // Started at 0, 40 and 80; at 120 the budget had passed.
  assertEquals(result, { attempted: 3, enqueued: 4 });
  assertEquals(enqueued, [
    "https://s3.example/inbox",
    "https://s4.example/inbox",
    "https://s5.example/inbox",
    "https://s1.example/inbox",
  ]);
});

test("fanOutDirectly() starts nothing once its signal aborted, and fails when the enqueue fails", async () => {
  const controller = new AbortController();
  controller.abort();
  let attempts = 0;
  const enqueued: number[] = [];
  await fanOutDirectly(deliveries(4), {
    concurrency: 2,
    budgetMs: 60_000,
    signal: controller.signal,
    deliver: () => Promise.resolve(void attempts++),
    enqueue: (rest) => Promise.resolve(void enqueued.push(rest.length)),
  });
  assertEquals([attempts, enqueued], [0, [4]]);
  await assertRejects(
    () =>
      fanOutDirectly(deliveries(2), {
        concurrency: 1,
        budgetMs: 60_000,
        signal: controller.signal,
        deliver: () => Promise.resolve(),
        enqueue: () => Promise.reject(new Error("queue down")),
      }),
    Error,
    "queue down",
  );
});

test("resolveFanoutDeliveries() checks each value and the budget against the fan-out's time limit", () => {
  assertEquals(resolveFanoutDeliveries(undefined, 120_000, 15_000), undefined);
  assertEquals(resolveFanoutDeliveries(false, 120_000, 15_000), undefined);
  assertEquals(resolveFanoutDeliveries({ concurrency: 8 }, 120_000, 15_000), {
    concurrency: 8,
    budgetMs: 10_000,
  });
  assertEquals(
    resolveFanoutDeliveries({ concurrency: 2, budget: { seconds: 30 } }, null, 15_000),
    { concurrency: 2, budgetMs: 30_000 },
  );
  const refused = (option: unknown, name: string, message: string) => {
    const error = assertThrows(
      () => resolveFanoutDeliveries(option as never, 120_000, 15_000),
      FederationOptionError,
      message,
    );
    assertEquals(error.option, name);
  };
  refused({}, "fanoutDeliveries.concurrency", "is required");
  refused({ concurrency: 0 }, "fanoutDeliveries.concurrency", "from 1 to 256");
  refused({ concurrency: 1.5 }, "fanoutDeliveries.concurrency", "got 1.5");
  refused({ concurrency: 4, budget: { seconds: -1 } }, "fanoutDeliveries.budget", "budget");
  refused({ concurrency: 4, budget: { minutes: 2 } }, "fanoutDeliveries.budget", "outboxTimeout");
  const unknown = assertThrows(
    () => resolveFanoutDeliveries({ concurency: 4 } as never, 120_000, 15_000),
    UnknownOptionError,
    "did you mean fanoutDeliveries.concurrency?",
  );
  assertEquals(unknown.option, "fanoutDeliveries.concurency");
  refused(8, "fanoutDeliveries", "must be an object");
});

const base = new URL("https://example.com/");

function federationOn(
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>>,
): Federation<void> {
  return loopbackFederation(queue, options, { attempts: 5, delayMs: 10 });
}

/**
 * Fans one activity out to 12 inboxes on a loopback server (one of which
 * answers 503 the first time) through an in-process queue that runs one
 * message at a time, and reports the most requests the server had at
 * once and the requests each inbox got.
 */
async function fanOutToLoopback(
  options: Partial<FederationOptions<void>>,
  orderingKey?: string,
): Promise<{ most: number; requests: Map<string, number> }> {
  let running = 0;
  let most = 0;
  const requests = new Map<string, number>();
  await using server = await startTestServer(async (request) => {
    const path = new URL(request.url).pathname;
    const count = (requests.get(path) ?? 0) + 1;
    requests.set(path, count);
    most = Math.max(most, ++running);
    await request.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    running--;
    return new Response(null, { status: path === "/u3/inbox" && count === 1 ? 503 : 202 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, options);
  const recipients = Array.from({ length: 12 }, (_, i) => ({
    id: new URL(`https://remote.example/u${i}`),
    inboxId: new URL(`/u${i}/inbox`, server.url),
  }));
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).sendActivity(
      { identifier: "alice" },
      recipients,
      new Create({
        id: new URL("https://example.com/activities/1"),
        actor: new URL("https://example.com/users/alice"),
        object: new Note({ content: "Hello" }),
      }),
      { fanout: "force", ...(orderingKey == null ? {} : { orderingKey }) },
    );
    await waitUntil(() => requests.size === 12 && requests.get("/u3/inbox") === 2, {
      what: "every inbox to have the activity, the 503 one on its retry",
    });
  });
  return { most, requests };
}

test("fanoutDeliveries: the fan-out worker makes the first attempts itself, so many at once, and the queue retries", async () => {
  const direct = await fanOutToLoopback({ fanoutDeliveries: { concurrency: 4 } });
  // Four lanes; on a loaded machine a lane may still be signing when the
  // first request is answered, so at least two at once, never five.
  assert(
    direct.most >= 2 && direct.most <= 4,
    `${direct.most} deliveries at once from a queue that runs one at a time`,
  );
  assertEquals([...direct.requests.values()].reduce((a, b) => a + b), 13);
  const queued = await fanOutToLoopback({});
  assertEquals(queued.most, 1, "without the option, the outbox worker's one at a time");
  assertEquals([...queued.requests.values()].reduce((a, b) => a + b), 13);
});

test("fanoutDeliveries: deliveries with an ordering key still go through the queue", async () => {
  const ordered = await fanOutToLoopback({ fanoutDeliveries: { concurrency: 4 } }, "note-1");
  assert(ordered.most === 1, `${ordered.most} deliveries ran at once`);
});

test("fanoutDeliveries is refused at createFederation() when it would outlast the fan-out's time limit", () => {
  const error = assertThrows(
    () =>
      createFederation<void>({
        kv: new MemoryKvStore(),
        queue: new InProcessMessageQueue(),
        outboxTimeout: { seconds: 20 },
        fanoutDeliveries: { concurrency: 8 },
      }),
    FederationOptionError,
    "outboxTimeout",
  );
  assertEquals(error.option, "fanoutDeliveries.budget");
});
