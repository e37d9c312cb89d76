// Readiness and liveness on in-process engines, through a real HTTP
// server: the report, the thresholds, the time limit of a probe, the
// access rule and the cache.
import { networkInterfaces } from "node:os";
import {
  assert,
  assertEquals,
  assertMatch,
  assertThrows,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import * as v from "valibot";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createHealthHandler } from "./handler.ts";
import type { HealthReport } from "./types.ts";
import { serveHealth } from "./testdata/serve-health.ts";

const TOKEN = "a-secret-of-enough-length";

/** A memory store whose reads can be counted or made to hang. */
class ProbedKvStore extends MemoryKvStore {
  reads = 0;
  hang: Promise<void> | undefined;
  override async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    if (key[0] === "fedwork" && key[1] === "health") {
      this.reads++;
      if (this.hang != null) await this.hang;
    }
    return await super.get<T>(key);
  }
}

function federationOn(kv: KvStore = new MemoryKvStore()): Federation<void> {
  return createFederation<void>({
    kv,
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
}

async function getJson(url: URL, init?: RequestInit): Promise<[number, Record<string, unknown>]> {
  const response = await fetch(url, init);
  return [response.status, await response.json()];
}

test("checkHealth() reports every engine and a live worker as ready", async () => {
  const federation = federationOn();
  const controller = new AbortController();
  const ready = deferred<void>();
  const running = federation.startQueue(undefined, {
    signal: controller.signal,
    onWorkerEvent: (event) => event.type === "ready" && ready.resolve(),
  });
  try {
    await within(ready.promise, "the worker to be ready");
    const report = await federation.checkHealth({ minWorkers: 1 });
    assertEquals(report.reasons, []);
    assert(report.ready);
    assertEquals(
      report.engines.map(({ kind, name, type, status }) => ({ kind, name, type, status })),
      [
        { kind: "kv", name: "kv", type: "MemoryKvStore", status: "ok" },
        {
          kind: "queue",
          name: "inbox+outbox+fanout+task",
          type: "InProcessMessageQueue",
          status: "ok",
        },
        { kind: "pubsub", name: "pubsub", type: "InProcessPubSub", status: "ok" },
      ],
    );
    assertEquals(report.workers.alive, 1);
    assertEquals(report.workers.status, "ok");
  } finally {
    controller.abort();
    await within(running, "the worker to stop");
  }
});

test("checkHealth() is not ready with fewer live workers than minWorkers", async () => {
  const report = await federationOn().checkHealth({ minWorkers: 1 });
  assertEquals(report.ready, false);
  assertEquals(report.workers.status, "failing");
  assertEquals(report.reasons, ["workers: 0 live workers, fewer than minWorkers 1"]);
  // Without minWorkers, the workers are reported, not judged.
  assert((await federationOn().checkHealth()).ready);
});

test("checkHealth() is not ready when a queue holds more ready messages than allowed", async () => {
  const federation = federationOn();
  const task = federation.defineTask("noop", { schema: v.unknown(), handler() {} });
  for (let i = 0; i < 3; i++) {
    await federation.createContext(new URL("https://app.example/"), undefined)
      .enqueueTask(task, undefined);
  }
  assert((await federation.checkHealth({ maxReadyMessages: 3 })).ready);
  const report = await federation.checkHealth({ maxReadyMessages: { task: 2 } });
  assertEquals(report.ready, false);
  const queue = report.engines.find((engine) => engine.kind === "queue")!;
  assertEquals(queue.status, "failing");
  assertEquals(queue.maxReadyMessages, 2);
  assertEquals(queue.depth?.ready, 3);
  assertEquals(report.reasons, [
    "queue inbox+outbox+fanout+task (InProcessMessageQueue): 3 ready messages, above " +
    "maxReadyMessages 2",
  ]);
});

test("checkHealth() fails a hung probe at its time limit and does not pile up calls", async () => {
  const kv = new ProbedKvStore();
  const release = deferred<void>();
  kv.hang = release.promise;
  const federation = federationOn(kv);
  const first = await federation.checkHealth({ timeout: { milliseconds: 50 } });
  assertEquals(first.ready, false);
  // (Only the store's reason is asserted: on a slow machine another probe
  // may pass 50 ms too.)
  assert(first.reasons.includes("kv (ProbedKvStore): no answer within 50 ms"), first.reasons[0]);
  const second = await federation.checkHealth({ timeout: { seconds: 5 } });
  assertMatch(second.reasons[0], /^kv \(ProbedKvStore\): its previous probe, started \d+ ms ago/);
  assertEquals(kv.reads, 1);
  release.resolve();
  kv.hang = undefined;
  // Once the hung read settled, the store is probed again.
  await within(
    (async () => {
      while (!(await federation.checkHealth()).ready) await new Promise((r) => setTimeout(r, 10));
    })(),
    "the store to be probed again",
  );
  assertEquals(kv.reads, 2);
});

test("the health handler answers loopback clients with 200 or 503 and JSON", async () => {
  const federation = federationOn();
  const health = createHealthHandler(federation, { minWorkers: 1, cacheFor: { milliseconds: 1 } });
  const server = await serveHealth(health);
  try {
    const [liveStatus, live] = await getJson(new URL("/healthz", server.url));
    assertEquals([liveStatus, live], [200, { status: "live" }]);
    const [status, report] = await getJson(new URL("/readyz", server.url));
    assertEquals(status, 503);
    assertEquals(report.ready, false);
    assertEquals(report.reasons, ["workers: 0 live workers, fewer than minWorkers 1"]);
    assertEquals((report.workers as HealthReport["workers"]).minWorkers, 1);
    const [notFound] = await getJson(new URL("/other", server.url));
    assertEquals(notFound, 404);
    const [post] = await getJson(new URL("/readyz", server.url), { method: "POST" });
    assertEquals(post, 405);
  } finally {
    await server.close();
  }
});

test("the health handler refuses a forwarded request and one with a wrong token", async () => {
  const health = createHealthHandler(federationOn(), { token: TOKEN });
  const server = await serveHealth(health);
  try {
    for (const header of ["X-Forwarded-For", "Forwarded", "X-Real-IP"]) {
      const [status, body] = await getJson(new URL("/readyz", server.url), {
        headers: { [header]: header === "Forwarded" ? "for=203.0.113.9" : "203.0.113.9" },
      });
      assertEquals(status, 403, header);
      assertMatch(String(body.error), /forwarded by a proxy/);
    }
    const [wrong] = await getJson(new URL("/readyz", server.url), {
      headers: { Authorization: "Bearer not-the-secret-at-all" },
    });
    assertEquals(wrong, 403);
    // The token grants access through the proxy too.
    const [right] = await getJson(new URL("/readyz", server.url), {
      headers: { Authorization: `Bearer ${TOKEN}`, "X-Forwarded-For": "203.0.113.9" },
    });
    assertEquals(right, 200);
  } finally {
    await server.close();
  }
});

/** A non-loopback IPv4 address of this machine, if it has one. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) {
      if (entry.family === "IPv4" && !entry.internal) return entry.address;
    }
  }
  return undefined;
}

test({
  name: "the health handler refuses a client on another address unless it has the token",
  ignore: externalAddress() === undefined,
  async fn() {
    const address = externalAddress()!;
    const server = await serveHealth(
      createHealthHandler(federationOn(), { token: TOKEN }),
      address,
    );
    try {
      const [status, body] = await getJson(new URL("/healthz", server.url));
      assertEquals(status, 403);
      assertEquals(body.error, "The health endpoints answer only loopback clients.");
      const [withToken] = await getJson(new URL("/healthz", server.url), {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      assertEquals(withToken, 200);
    } finally {
      await server.close();
    }
  },
});

test("the health handler probes the engines once per cacheFor period", async () => {
  const kv = new ProbedKvStore();
  const health = createHealthHandler(federationOn(kv), { cacheFor: { minutes: 10 } });
  const info = { remoteAddress: "127.0.0.1" };
  const responses = await Promise.all(
    Array.from({ length: 5 }, () => health(new Request("http://localhost/readyz"), info)),
  );
  assertEquals(responses.map((response) => response.status), [200, 200, 200, 200, 200]);
  await health(new Request("http://localhost/readyz"), info);
  assertEquals(kv.reads, 1);
});

test("the health handler without the client's address needs the token", async () => {
  const health = createHealthHandler(federationOn(), { token: TOKEN });
  assertEquals((await health(new Request("http://localhost/healthz"))).status, 403);
  const withToken = await health(
    new Request("http://localhost/healthz", { headers: { Authorization: `Bearer ${TOKEN}` } }),
  );
  assertEquals(withToken.status, 200);
  // Deno.serve()'s handler info fits as it is.
  const deno = await health(new Request("http://localhost/healthz"), {
    remoteAddr: { hostname: "::1" },
  });
  assertEquals(deno.status, 200);
});

test("createHealthHandler() checks its options when it is called", () => {
  const federation = federationOn();
  assertThrows(
    () => createHealthHandler(federation, { tokn: TOKEN } as never),
    UnknownOptionError,
    "did you mean token",
  );
  assertThrows(() => createHealthHandler(federation, { token: "short" }), TypeError, "token");
  assertThrows(
    () => createHealthHandler(federation, { allowLoopback: false }),
    TypeError,
    "allowLoopback",
  );
  assertThrows(
    () => createHealthHandler(federation, { timeout: { seconds: -1 } }),
    RangeError,
    "timeout",
  );
  assertThrows(
    () => createHealthHandler(federation, { minWorkers: 1.5 }),
    RangeError,
    "minWorkers",
  );
  assertThrows(
    () => createHealthHandler(federation, { maxReadyMessages: { inbx: 1 } as never }),
    UnknownOptionError,
    "maxReadyMessages.inbx",
  );
  assertThrows(
    () => createHealthHandler(federation, { livenessPath: "healthz" }),
    TypeError,
    "livenessPath",
  );
  assertThrows(
    () => createHealthHandler(federation, { readinessPath: "/healthz" }),
    TypeError,
    "must differ",
  );
});
