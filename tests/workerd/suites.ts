// The test files scripts/workerd-tests.ts runs inside Cloudflare's workerd
// (the fourth runtime of `npm test`), bundled into one Worker.  Paths are
// relative to the repository's root.
//
// A file belongs here when what it tests runs on Workers and it bundles
// for the platform: no node:child_process, node:fs or loopback servers (a
// Worker cannot listen), no engine that needs a TCP driver (Redis,
// PostgreSQL, RabbitMQ, SQLite), nothing that builds a federation or draws
// random values at a module's top level (Workers forbid timers and random
// values in the global scope).  Left out for that reason: the backends'
// suites; every core test that starts a loopback server (delivery and
// sending, the inbox handler and its hostile peers, lookups, collections,
// the outgoing-HTTP module and document loader, webhooks' deliveries, host
// health); the crash and soak tests (child processes); and the queue
// conformance suite: testMessageQueue() drives listen(), which Cloudflare
// Queues has not (it pushes batches to queue()); what applies of it is in
// inside/message-queue.ts.  Also left out, though they would pass: type
// tests (*types.test.ts, checked by the type checkers, not at run time),
// misspelt-option tests, and the listen-loop kit that only durable
// backends use (lease listener, sibling queues, running listeners).
//
// Files under tests/workerd/src/inside/ run only here, since they need the
// Worker's bindings (KV, D1, a queue) or the Node.js server beside it; the
// others also run on Deno, Node.js and Bun.
export const WORKERD_TEST_FILES: readonly string[] = [
  // Durations and TTLs: Temporal through the polyfill, as on every runtime.
  "packages/core/src/time/duration.test.ts",
  "packages/core/src/kv/temporal-ttl.test.ts",
  // MemoryKvStore's own tests (its conformance run is in inside/kv-stores.ts):
  // the store a Worker keeps for caches within one isolate.
  "packages/core/src/kv/memory-kv-store.test.ts",
  // Retry policies: what decides a failed task's next delivery through the
  // Cloudflare queue.
  "packages/core/src/retry/exponential-backoff.test.ts",
  // The task codec (devalue and vocabulary objects), its limits and its
  // fuzzing: what a task's payload goes through on its way into a
  // Cloudflare queue and back out in queue().
  "packages/core/src/tasks/codec/codec.test.ts",
  "packages/core/src/tasks/codec/vocabulary.test.ts",
  "packages/core/src/tasks/codec/limits.test.ts",
  "packages/core/src/tasks/codec/fuzz.test.ts",
  // Task definitions, their registry, schema validation (Zod, Valibot and
  // ArkType, the last in its jitless mode: see harness/setup.ts), routing,
  // enqueueing, the handler that runs a task, cancellation and schedules:
  // the path processQueueBatch() drives.
  "packages/core/src/tasks/registry.test.ts",
  "packages/core/src/tasks/validation.test.ts",
  "packages/core/src/tasks/routing.test.ts",
  "packages/core/src/tasks/enqueue.test.ts",
  "packages/core/src/tasks/handler.test.ts",
  "packages/core/src/operator/cancellation/markers.test.ts",
  "packages/core/src/operator/schedules/schedule.test.ts",
  // The processing pipeline: one outcome per message, the producer, time
  // limits (timers inside a request, which Workers allow).
  "packages/core/src/processing/dispatcher.test.ts",
  "packages/core/src/processing/producer.test.ts",
  "packages/core/src/processing/time-limit.test.ts",
  // ActivityPub without a network: routing, negotiation, responses,
  // WebFinger and NodeInfo documents, keys, digests, HTTP signatures and
  // object proofs (Web Crypto as workerd provides it), inbox checks, and
  // the address guard's rules and remote limits.
  "packages/core/src/activitypub/http/router.test.ts",
  "packages/core/src/activitypub/http/negotiation.test.ts",
  "packages/core/src/activitypub/http/respond.test.ts",
  "packages/core/src/activitypub/webfinger/handler.test.ts",
  "packages/core/src/activitypub/nodeinfo/document.test.ts",
  "packages/core/src/activitypub/actors/keys.test.ts",
  "packages/core/src/activitypub/actors/key-pairs.test.ts",
  "packages/core/src/activitypub/signatures/base64.test.ts",
  "packages/core/src/activitypub/signatures/digest.test.ts",
  "packages/core/src/activitypub/signatures/verify.test.ts",
  "packages/core/src/activitypub/signatures/key-cache.test.ts",
  "packages/core/src/activitypub/proofs/proof.test.ts",
  "packages/core/src/activitypub/proofs/ld-signature.test.ts",
  "packages/core/src/activitypub/inbox/verify.test.ts",
  "packages/core/src/activitypub/inbox/forwarded.test.ts",
  "packages/core/src/activitypub/network/private-address.test.ts",
  "packages/core/src/activitypub/network/remote-limits.test.ts",
  "packages/core/src/http/capped-body.test.ts",
  // The federation's wiring: builder, options, context and registry.
  "packages/core/src/federation/builder.test.ts",
  "packages/core/src/federation/options.test.ts",
  "packages/core/src/federation/context.test.ts",
  "packages/core/src/federation/registry.test.ts",
  // Only here: the key–value conformance suite on MemoryKvStore,
  // WorkersKvStore and D1KvStore, the last two over the Worker's real
  // bindings.
  "tests/workerd/src/inside/kv-stores.ts",
  // Only here: what of the queue conformance suite applies to
  // WorkersMessageQueue, through the Worker's own queue() consumer.
  "tests/workerd/src/inside/message-queue.ts",
  // Only here: a small federation (WebFinger and an actor, a typed task in
  // the queue consumer, a signed Follow/Accept with a Fedwork server on
  // Node.js).
  "tests/workerd/src/inside/federation.ts",
];
