import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import { keepsMessageObjects } from "../queue/message-ownership.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { BaseMessage } from "./envelope.ts";
import { MessageProducer } from "./producer.ts";
import { testMessage } from "./testdata/test-messages.ts";

interface Call {
  readonly method: "enqueue" | "enqueueMany";
  readonly messages: readonly BaseMessage[];
  readonly options?: MessageQueueEnqueueOptions;
}

function recordingQueue(options: { many?: boolean; failing?: boolean } = {}) {
  const calls: Call[] = [];
  const queue: MessageQueue = {
    enqueue(message: BaseMessage, enqueueOptions?: MessageQueueEnqueueOptions) {
      calls.push({ method: "enqueue", messages: [message], options: enqueueOptions });
      return options.failing ? Promise.reject(new Error("queue down")) : Promise.resolve();
    },
    listen: () => Promise.resolve(),
  };
  if (options.many) {
    queue.enqueueMany = (messages: readonly BaseMessage[], enqueueOptions) => {
      calls.push({ method: "enqueueMany", messages, options: enqueueOptions });
      return Promise.resolve();
    };
  }
  return { queue, calls };
}

function producer(start?: (contextData: string) => Promise<void>) {
  const counted: BaseMessage[] = [];
  return {
    counted,
    producer: new MessageProducer<string>({
      tracer: trace.getTracer("producer-test"),
      metrics: { recordEnqueued: (messages) => void counted.push(...messages) },
      ...(start == null ? {} : { start }),
    }),
  };
}

test("the producer hands several messages over with enqueueMany when the queue has it", async () => {
  const { queue, calls } = recordingQueue({ many: true });
  const { producer: p, counted } = producer();
  await p.produce(queue, [testMessage("a"), testMessage("b")], { orderingKey: "k" });
  assertEquals(calls.map((call) => call.method), ["enqueueMany"]);
  assertEquals(calls[0].options, { orderingKey: "k" });
  assertEquals(counted.length, 2);
});

test("the producer falls back to one enqueue per message without enqueueMany", async () => {
  const { queue, calls } = recordingQueue();
  const { producer: p, counted } = producer();
  await p.produce(queue, [testMessage("a"), testMessage("b"), testMessage("c")]);
  assertEquals(calls.map((call) => call.method), ["enqueue", "enqueue", "enqueue"]);
  assertEquals(counted.length, 3);
});

test("the producer stamps fresh copies with a due time and leaves the caller's messages alone", async () => {
  const { queue, calls } = recordingQueue();
  const { producer: p } = producer();
  const message = testMessage("a");
  const before = Date.now();
  await p.produce(queue, [message], { delay: { seconds: 60 } });
  const [sent] = calls[0].messages;
  assert(sent !== message);
  assertEquals(sent.id, message.id);
  assertEquals(message.dueAt, undefined);
  assert(Date.parse(sent.dueAt!) >= before + 59_000, sent.dueAt);
});

test("the producer leaves the due time out of a task's first undelayed attempt only", async () => {
  const { queue, calls } = recordingQueue({ many: true });
  const { producer: p } = producer();
  const task = (id: string, attempt = 0) => ({ ...testMessage(id), type: "task", attempt });
  await p.produce(queue, [task("a"), task("b")]);
  // Due at its `started`, which queue-wait metrics read in its place.
  assertEquals(calls[0].messages.map((sent) => "dueAt" in sent), [false, false]);
  await p.produce(queue, [task("c", 1)]);
  await p.produce(queue, [task("d")], { delay: { seconds: 30 } });
  await p.produce(queue, [testMessage("e")]);
  // A queue keeping message objects in memory (the in-process one) stores
  // no text to shorten: it gets the field as before.
  Object.assign(queue, { [keepsMessageObjects]: true });
  await p.produce(queue, [task("f")]);
  for (const call of calls.slice(1)) {
    const [sent] = call.messages;
    assertEquals(new Date(sent.dueAt!).toISOString(), sent.dueAt, sent.id);
  }
  assertEquals(calls.length, 5);
});

test("the producer runs its hooks around the hand-over and counts nothing the queue refused", async () => {
  const { queue } = recordingQueue({ failing: true });
  const { producer: p, counted } = producer();
  const seen: string[] = [];
  await assertRejects(
    () =>
      p.produce(queue, [testMessage("a")], {}, {
        before: () => Promise.resolve(void seen.push("before")),
        notSent: () => Promise.resolve(void seen.push("notSent")),
      }),
    Error,
    "queue down",
  );
  assertEquals(seen, ["before", "notSent"]);
  assertEquals(counted, []);
});

test("the producer starts the workers once, on the first enqueue with context data", async () => {
  const { queue } = recordingQueue();
  const started = deferred<string>();
  let starts = 0;
  const { producer: p } = producer((contextData) => {
    starts++;
    started.resolve(contextData);
    return Promise.resolve();
  });
  await p.produce(queue, [testMessage("a")]);
  assertEquals(starts, 0);
  await p.produce(queue, [testMessage("b")], {}, { start: { contextData: "data" } });
  await p.produce(queue, [testMessage("c")], {}, { start: { contextData: "other" } });
  assertEquals(await within(started.promise, "the workers to start"), "data");
  assertEquals(starts, 1);
});
