import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import type { Temporal } from "@js-temporal/polyfill";
import type { KvKey } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { FederationOptionError } from "./errors.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { FEDIFY_ONLY_OPTION_HINTS } from "../options/federation-option-names.ts";
import { createFederation, type FederationImpl } from "./federation.ts";
import type { DocumentLoaderFactoryOptions } from "./option-forms.ts";
import { DEFAULT_USER_AGENT, type FederationOptions } from "./options.ts";

function invalid(options: unknown, option: string, messageIncludes: string): void {
  const error = assertThrows(
    () => createFederation(options as FederationOptions<void>),
    FederationOptionError,
    messageIncludes,
  );
  assertEquals(error.option, option);
}

function unknown(options: unknown, option: string, messageIncludes: string): void {
  const error = assertThrows(
    () => createFederation(options as FederationOptions<void>),
    UnknownOptionError,
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

test("createFederation() accepts Fedify's origin object, its handleHost on another host", () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    origin: { handleHost: "Example.com", webOrigin: "https://ap.example.com" },
  });
  const ctx = federation.createContext(new URL("http://localhost:8000/"), undefined);
  assertEquals(ctx.canonicalOrigin, "https://ap.example.com");
  const kv = new MemoryKvStore();
  invalid(
    { kv, origin: { handleHost: "example.com/path", webOrigin: "https://ap.example.com" } },
    "origin.handleHost",
    'must be a host name such as "example.com"',
  );
  invalid(
    { kv, origin: { handleHost: "example.com", webOrigin: "https://example.com/ap" } },
    "origin.webOrigin",
    "origin.webOrigin option must be an http(s) URL without a path",
  );
  invalid({ kv, origin: { webOrigin: "https://example.com" } }, "origin", "handleHost");
});

test("createFederation() makes Fedify's userAgent object into a header value", () => {
  const seen: (string | undefined)[] = [];
  const documentLoaderFactory = (options?: DocumentLoaderFactoryOptions) => {
    seen.push(options?.userAgent as string | undefined);
    return () => Promise.reject(new Error("offline"));
  };
  const kv = new MemoryKvStore();
  createFederation<void>({
    kv,
    userAgent: { software: "MyApp/1.2.3", url: "https://example.com/" },
    documentLoaderFactory,
  });
  createFederation<void>({
    kv,
    userAgent: { url: new URL("https://example.com") },
    documentLoaderFactory,
  });
  createFederation<void>({ kv, userAgent: { software: "MyApp/1.2.3" }, documentLoaderFactory });
  createFederation<void>({ kv, documentLoaderFactory });
  assertEquals(seen, [
    `MyApp/1.2.3 (${DEFAULT_USER_AGENT}; +https://example.com/)`,
    `${DEFAULT_USER_AGENT} (+https://example.com/)`,
    `MyApp/1.2.3 (${DEFAULT_USER_AGENT})`,
    DEFAULT_USER_AGENT,
  ]);
  invalid({ kv, userAgent: { software: "" } }, "userAgent.software", "MyApp/1.0.0");
  invalid({ kv, userAgent: { url: "not a url" } }, "userAgent.url", "must be a URL");
});

test("createFederation() builds its document loader with documentLoaderFactory", async () => {
  const loader = () => Promise.reject(new Error("offline"));
  let received: DocumentLoaderFactoryOptions | undefined;
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    documentLoaderFactory: (options) => {
      received = options;
      return loader;
    },
  });
  assertEquals(received, { allowPrivateAddress: true, userAgent: DEFAULT_USER_AGENT });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  // The factory's loader, held to the document limits.
  await assertRejects(() => ctx.documentLoader("https://remote.example/"), Error, "offline");
  const kv = new MemoryKvStore();
  invalid(
    { kv, documentLoader: loader, documentLoaderFactory: () => loader },
    "documentLoaderFactory",
    "not both",
  );
  invalid({ kv, documentLoaderFactory: () => "loader" }, "documentLoaderFactory", "must return");
});

test("createFederation() refuses contextLoaderFactory, naming documentLoaderFactory", () => {
  unknown(
    { kv: new MemoryKvStore(), contextLoaderFactory: () => () => Promise.reject() },
    "contextLoaderFactory",
    "documentLoaderFactory",
  );
});

test("createFederation() refuses an unknown option, suggesting the nearest name", () => {
  const kv = new MemoryKvStore();
  unknown({ kv, queues: new InProcessMessageQueue() }, "queues", "did you mean queue?");
  unknown({ kv, userAgnet: "MyApp/1.0" }, "userAgnet", "did you mean userAgent?");
  unknown({ kv, documentloader: () => {} }, "documentloader", "did you mean documentLoader?");
  const error = assertThrows(
    () => createFederation({ kv, frobnicate: true } as FederationOptions<void>),
    UnknownOptionError,
    "Unknown option frobnicate",
  );
  assertEquals(error.message.includes("did you mean"), false);
  // Fedify's options that Fedwork lacks get advice rather than a guess.
  unknown({ kv, onOutboxError: () => {} }, "onOutboxError", 'federation.on("failed"');
  unknown({ kv, circuitBreaker: {} }, "circuitBreaker", "Fedify's");
  // An option set to undefined is absent.
  createFederation({ kv, circuitBreaker: undefined } as FederationOptions<void>);
});

test("every Fedify-only hint names an option createFederation() does not take", () => {
  // A hint for an option Fedwork supports is never given: the name is known.
  for (const name of Object.keys(FEDIFY_ONLY_OPTION_HINTS)) {
    unknown({ kv: new MemoryKvStore(), [name]: {} }, name, "one of Fedify's");
  }
});

test("createFederation() hands its KvStore a Temporal.Duration as every TTL", async () => {
  // A store written the way Fedify's are: it calls round() on the TTL.
  const ttls: unknown[] = [];
  const fedifyStyleStore = {
    get: () => Promise.resolve(undefined),
    // Method syntax, as in a class: parameters are then checked bivariantly,
    // which is what lets Fedify's stores pass for Fedwork's KvStore.
    set(_key: KvKey, _value: unknown, options?: { ttl?: Temporal.Duration }) {
      options?.ttl?.round({ largestUnit: "hour" });
      ttls.push(options?.ttl);
      return Promise.resolve();
    },
    delete: () => Promise.resolve(),
    async *list() {},
  };
  const federation = createFederation<void>({ kv: fedifyStyleStore }) as FederationImpl<void>;
  for (const ttl of [{ minutes: 5 }, "PT5M"]) {
    await federation.options.kv.set(["k"], 1, { ttl });
  }
  assertEquals(ttls.map((ttl) => (ttl as Temporal.Duration).total("second")), [300, 300]);
});

test("createFederation() checks remoteRequests, naming the limit and suggesting a misspelt one", () => {
  const kv = new MemoryKvStore();
  assertThrows(
    () => createFederation({ kv, remoteRequests: { timout: { seconds: 5 } } as never }),
    UnknownOptionError,
    "did you mean remoteRequests.timeout?",
  );
  assertThrows(
    () => createFederation({ kv, remoteRequests: { deliveryTimeout: { seconds: 0 } } }),
    FederationOptionError,
    "remoteRequests.deliveryTimeout",
  );
  assertThrows(
    () => createFederation({ kv, remoteRequests: { maxBodyBytes: -1 } }),
    FederationOptionError,
    "remoteRequests.maxBodyBytes",
  );
  const { remoteRequests } = (createFederation({
    kv,
    remoteRequests: { timeout: { seconds: 5 }, maxRedirects: 2 },
  }) as FederationImpl<void>).options;
  assertEquals(remoteRequests, {
    timeoutMs: 5_000,
    maxBodyBytes: 1024 * 1024,
    maxRedirects: 2,
    deliveryTimeoutMs: 15_000,
  });
});

test("createFederation() checks proofMaxAge, a duration or false", () => {
  const kv = new MemoryKvStore();
  invalid({ kv, proofMaxAge: "a week" }, "proofMaxAge", "proofMaxAge option must be a duration");
  invalid({ kv, proofMaxAge: { days: -1 } }, "proofMaxAge", "must not be negative");
  unknown({ kv, proofMaxAges: { days: 1 } }, "proofMaxAges", "did you mean proofMaxAge?");
  createFederation({ kv, proofMaxAge: false });
  createFederation({ kv, proofMaxAge: { days: 30 } });
});
