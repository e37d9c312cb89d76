import {
  assert,
  assertEquals,
  assertFalse,
  assertStrictEquals,
  assertThrows,
  test,
} from "@fedify/fixture";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { TaskDefinitionError } from "./errors.ts";
import { TaskStore } from "./registry.ts";

const schema = z.object({ n: z.number() });
const handler = () => {};

test("defineTask returns a handle carrying the name and schema", () => {
  const store = new TaskStore<void>();
  const task = store.defineTask("count", { schema, handler });
  assertEquals(task.name, "count");
  assertStrictEquals(task.schema, schema);
  assert(store.has(task));
  assertStrictEquals(store.get("count")?.definition, task);
});

test("defineTask accepts Zod, Valibot and ArkType schemas", () => {
  const store = new TaskStore<void>();
  store.defineTask("zod", { schema: z.object({ a: z.string() }), handler });
  store.defineTask("valibot", { schema: v.object({ a: v.string() }), handler });
  store.defineTask("arktype", { schema: type({ a: "string" }), handler });
  assertEquals(store.names, ["zod", "valibot", "arktype"]);
});

test("defineTask with a duplicate name throws naming the task", () => {
  const store = new TaskStore<void>();
  store.defineTask("digest", { schema, handler });
  const error = assertThrows(
    () => store.defineTask("digest", { schema, handler }),
    TaskDefinitionError,
    '"digest"',
  );
  assertEquals(error.taskName, "digest");
});

test("task names are case-sensitive", () => {
  const store = new TaskStore<void>();
  const lower = store.defineTask("digest", { schema, handler });
  const upper = store.defineTask("Digest", { schema, handler });
  assertStrictEquals(store.get("digest")?.definition, lower);
  assertStrictEquals(store.get("Digest")?.definition, upper);
});

test("names such as constructor and __proto__ work like any other", () => {
  const store = new TaskStore<void>();
  assertFalse(store.get("constructor") != null);
  assertFalse(store.get("__proto__") != null);
  const ctor = store.defineTask("constructor", { schema, handler });
  const proto = store.defineTask("__proto__", { schema, handler });
  const toString = store.defineTask("toString", { schema, handler });
  assertStrictEquals(store.get("constructor")?.definition, ctor);
  assertStrictEquals(store.get("__proto__")?.definition, proto);
  assertStrictEquals(store.get("toString")?.definition, toString);
  assertThrows(() => store.defineTask("__proto__", { schema, handler }), TaskDefinitionError);
});

test("defineTask rejects an empty or non-string name", () => {
  const store = new TaskStore<void>();
  assertThrows(() => store.defineTask("", { schema, handler }), TaskDefinitionError, "name");
  assertThrows(
    () => store.defineTask(42 as unknown as string, { schema, handler }),
    TaskDefinitionError,
    "non-empty string",
  );
});

test("defineTask without a schema throws naming the option and the task", () => {
  const store = new TaskStore<void>();
  const error = assertThrows(
    // @ts-expect-error: the schema is required.
    () => store.defineTask("no-schema", { handler }),
    TaskDefinitionError,
    "schema option",
  );
  assertEquals(error.option, "schema");
  assert(error.message.includes('"no-schema"'), error.message);
});

test("defineTask rejects a schema that is not a Standard Schema", () => {
  const store = new TaskStore<void>();
  for (
    const bogus of [
      { parse: () => {} },
      { "~standard": { version: 2, validate: () => ({ value: 1 }) } },
      { "~standard": { version: 1 } },
      "string",
    ]
  ) {
    assertThrows(
      () => store.defineTask("bogus", { schema: bogus as never, handler }),
      TaskDefinitionError,
      "Standard Schema",
    );
  }
  assertFalse(store.get("bogus") != null);
});

test("defineTask checks handler, retryPolicy, onError and queue naming the option", () => {
  const store = new TaskStore<void>();
  const cases: [string, Record<string, unknown>][] = [
    ["handler", { handler: "nope" }],
    ["retryPolicy", { handler, retryPolicy: { maxAttempts: 3 } }],
    ["onError", { handler, onError: 1 }],
    ["queue", { handler, queue: { enqueue() {} } }],
  ];
  for (const [option, options] of cases) {
    const error = assertThrows(
      () => store.defineTask("bad", { schema, ...options } as never),
      TaskDefinitionError,
      `${option} option of the task "bad"`,
    );
    assertEquals(error.option, option);
  }
  assertFalse(store.get("bad") != null);
});

test("defineTask checks its time limit, naming the task and the option, and accepts null", () => {
  const store = new TaskStore<void>();
  for (const timeout of [{ seconds: 0 }, "-PT1S", { days: 30 }, "soon", 5000]) {
    const error = assertThrows(
      () => store.defineTask("slow", { schema, handler, timeout } as never),
      TaskDefinitionError,
      'The task "slow" has an invalid time limit: The timeout option',
    );
    assertEquals(error.option, "timeout");
  }
  store.defineTask("unlimited", { schema, handler, timeout: null });
  store.defineTask("limited", { schema, handler, timeout: "PT90S" });
  store.defineTask("default", { schema, handler });
  assertEquals(store.get("unlimited")?.timeoutMs, null);
  assertEquals(store.get("limited")?.timeoutMs, 90_000);
  assertEquals(store.get("default")?.timeoutMs, undefined);
});

test("defineTask accepts a MessageQueue as the task's queue", async () => {
  await using queue = new InProcessMessageQueue();
  const store = new TaskStore<void>();
  store.defineTask("queued", { schema, handler, queue });
  assertStrictEquals(store.get("queued")?.queue, queue);
});

test("a same-named handle from another store is not recognised", () => {
  const mine = new TaskStore<void>();
  const theirs = new TaskStore<void>();
  mine.defineTask("shared-name", { schema, handler });
  const foreign = theirs.defineTask("shared-name", { schema, handler });
  assertFalse(mine.has(foreign));
  assertEquals(mine.resolve(foreign), undefined);
  assertFalse(mine.has({ name: "shared-name", schema }));
});

test("a cloned store keeps earlier tasks and does not share later ones", () => {
  const builder = new TaskStore<void>();
  const early = builder.defineTask("early", { schema, handler });
  const first = builder.clone();
  const second = builder.clone();
  assert(first.has(early) && second.has(early));
  const late = builder.defineTask("late", { schema, handler });
  first.defineTask("only-first", { schema, handler });
  assertFalse(first.has(late));
  assertFalse(second.has(late));
  assertEquals(second.get("only-first"), undefined);
  assertEquals(builder.get("only-first"), undefined);
  assertEquals(first.names, ["early", "only-first"]);
});
