import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { FederationOptionError } from "./errors.ts";
import { createFederation } from "./federation.ts";
import type { FederationOptions } from "./options.ts";

function invalid(options: unknown, option: string, messageIncludes: string): void {
  const error = assertThrows(
    () => createFederation(options as FederationOptions<void>),
    FederationOptionError,
    messageIncludes,
  );
  assertEquals(error.option, option);
}

test("createFederation() requires the kv option and names it", () => {
  invalid({}, "kv", "kv option is required");
  invalid({ kv: 42 }, "kv", "kv option must be a KvStore");
});

test("createFederation() names the queue role whose queue is invalid", () => {
  const kv = new MemoryKvStore();
  invalid(
    { kv, queue: { outbox: {} } },
    "queue.outbox",
    "queue.outbox option must be a MessageQueue",
  );
  invalid({ kv, queue: { inbox: "redis" } }, "queue.inbox", "queue.inbox");
  invalid(
    { kv, queue: { outbx: new InProcessMessageQueue() } },
    "queue.outbx",
    "Unknown queue role",
  );
  invalid({ kv, queue: 1 }, "queue", "queue option must be a MessageQueue");
});

test("createFederation() requires origin to be a bare http(s) URL", () => {
  const kv = new MemoryKvStore();
  invalid({ kv, origin: "not a url" }, "origin", "origin option must be an http(s) URL");
  invalid({ kv, origin: "ftp://example.com" }, "origin", "http(s) URL");
  invalid({ kv, origin: "https://example.com/path" }, "origin", "without a path");
});

test("createFederation() accepts only fallback or strict task queue resolution", () => {
  invalid(
    { kv: new MemoryKvStore(), taskQueueResolution: "loose" },
    "taskQueueResolution",
    'taskQueueResolution option must be "fallback" or "strict"',
  );
});

test("createFederation() requires retry policies to be functions", () => {
  const kv = new MemoryKvStore();
  for (const name of ["inboxRetryPolicy", "outboxRetryPolicy", "taskRetryPolicy"]) {
    invalid({ kv, [name]: { maxAttempts: 3 } }, name, `${name} option must be a retry policy`);
  }
});

test("createFederation() checks the types of the other options", () => {
  const kv = new MemoryKvStore();
  invalid({ kv, manuallyStartQueue: "yes" }, "manuallyStartQueue", "manuallyStartQueue");
  invalid({ kv, allowPrivateAddress: 1 }, "allowPrivateAddress", "allowPrivateAddress");
  invalid({ kv, userAgent: "" }, "userAgent", "userAgent");
  invalid({ kv, documentLoader: "fetch" }, "documentLoader", "documentLoader");
  invalid({ kv, tracerProvider: {} }, "tracerProvider", "tracerProvider");
});

test("createFederation() accepts one queue for every role", () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    origin: new URL("https://example.com"),
  });
  const ctx = federation.createContext(new URL("http://localhost:8000/"), undefined);
  assertEquals(ctx.canonicalOrigin, "https://example.com");
});
