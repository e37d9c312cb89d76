// The test files scripts/workerd-tests.ts runs inside Cloudflare's workerd
// (the fourth runtime of `npm test`), bundled into one Worker.  Paths are
// relative to the repository's root.
//
// A file belongs here when what it tests runs on Workers and it bundles
// for the platform: no node:child_process, node:fs or loopback servers
// (a Worker cannot listen), no engine that needs a TCP driver (Redis,
// PostgreSQL, RabbitMQ, SQLite), nothing that builds a federation or draws
// random values at module top level (Workers forbid timers and random
// values in the global scope).  Left out for that reason: the backends'
// suites, everything that starts a loopback server with startTestServer()
// (delivery, inbox, lookups, hostile peers, the outgoing-HTTP module's
// tests), the crash and soak tests (child processes), and the queue
// conformance suite: testMessageQueue() drives listen(), which Cloudflare
// Queues has not (it pushes batches to queue()); what applies of it is in
// inside/message-queue.ts.
//
// Files under tests/workerd/src/inside/ run only here, since they need the
// Worker's bindings (KV, D1, a queue); the others also run on Deno, Node.js
// and Bun.
export const WORKERD_TEST_FILES: readonly string[] = [
  // Durations and TTLs: Temporal through the polyfill, as on every runtime.
  "packages/core/src/time/duration.test.ts",
  "packages/core/src/kv/temporal-ttl.test.ts",
  // MemoryKvStore's own tests: the store a Worker uses for caches.
  "packages/core/src/kv/memory-kv-store.test.ts",
  // Retry policies: pure, but they read Temporal and option checks.
  "packages/core/src/retry/exponential-backoff.test.ts",
  // The task codec (devalue and vocabulary objects) and its limits: what a
  // task's payload goes through on its way into a Cloudflare queue.
  "packages/core/src/tasks/codec/codec.test.ts",
  "packages/core/src/tasks/codec/vocabulary.test.ts",
  "packages/core/src/tasks/codec/limits.test.ts",
  // Task definitions, their registry and schema validation (Zod, Valibot,
  // ArkType), which must load without eval.
  "packages/core/src/tasks/registry.test.ts",
  "packages/core/src/tasks/validation.test.ts",
  // HTTP routing, content negotiation, digests and key pairs: Web Crypto
  // and URL handling as workerd provides them.
  "packages/core/src/activitypub/http/router.test.ts",
  "packages/core/src/activitypub/http/negotiation.test.ts",
  "packages/core/src/activitypub/signatures/digest.test.ts",
  "packages/core/src/activitypub/actors/key-pairs.test.ts",
  // Only here: the key–value conformance suite on WorkersKvStore and
  // D1KvStore over the Worker's real bindings.
  "tests/workerd/src/inside/kv-stores.ts",
  // Only here: what of the queue conformance suite applies to
  // WorkersMessageQueue, through the Worker's own queue() consumer.
  "tests/workerd/src/inside/message-queue.ts",
  // Only here: a small federation (WebFinger and an actor, a typed task in
  // the queue consumer, a signed Follow/Accept with a Fedwork server on
  // Node.js).
  "tests/workerd/src/inside/federation.ts",
];
