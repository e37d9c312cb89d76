// The dashboard's handler without a browser: who may see it, where it is
// mounted, its JSON API, replay and discard (and their CSRF guard), and
// that attacker-controlled payloads never reach the HTML as markup.
import {
  assert,
  assertEquals,
  assertFalse,
  assertMatch,
  assertThrows,
  deferred,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import {
  createFederation,
  type Federation,
  InProcessMessageQueue,
  MemoryKvStore,
  PermanentError,
  type TaskDefinition,
  UnknownOptionError,
} from "@fedwork/core";
import { Hono } from "hono";
import { z } from "zod";
import { createDashboard, DASHBOARD_CSRF_HEADER } from "./mod.ts";
import { serializeTaskUpdate } from "./serialize.ts";

const base = new URL("https://web.example/");
const SCRIPT = '<script>alert("pwned")</script>';

interface Setup {
  federation: Federation<void>;
  deliver: TaskDefinition<void, { note: string; when: Date }, { note: string; when: Date }>;
  failedId: string;
  succeed(): void;
  stop(): Promise<void>;
  events: { completed: number; failed: number };
  waitFor(type: "completed" | "failed", n: number): Promise<void>;
}

/** A federation whose task "deliver" failed for good once, with a <script> in its payload. */
async function setUp(): Promise<Setup> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
  });
  let ok = false;
  const deliver = federation.defineTask("deliver", {
    schema: z.object({ note: z.string(), when: z.date() }),
    handler() {
      if (!ok) throw new PermanentError(`refused ${SCRIPT}`);
    },
  });
  const events = { completed: 0, failed: 0 };
  const waiters: { type: "completed" | "failed"; n: number; resolve(): void }[] = [];
  for (const type of ["completed", "failed"] as const) {
    federation.on(type, () => {
      events[type]++;
      for (const waiter of waiters) {
        if (waiter.type === type && events[type] >= waiter.n) waiter.resolve();
      }
    });
  }
  const waitFor = (type: "completed" | "failed", n: number) => {
    if (events[type] >= n) return Promise.resolve();
    const { promise, resolve } = deferred();
    waiters.push({ type, n, resolve });
    return within(promise, `${n} ${type} events`);
  };
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  const result = await federation.createContext(base, undefined).enqueueTask(deliver, {
    note: SCRIPT,
    when: new Date("2026-01-02T03:04:05Z"),
  });
  await waitFor("failed", 1);
  return {
    federation,
    deliver,
    failedId: (result as { messageId: string }).messageId,
    succeed: () => ok = true,
    events,
    waitFor,
    async stop() {
      controller.abort();
      await worker;
    },
  };
}

const allow = () => true;

/** Only what every Fedwork 0.2 federation has for the panels before 0.3's. */
function panelsOf02(federation: Federation<void>) {
  return {
    getQueueDepths: () => federation.getQueueDepths(),
    getThroughput: (options?: { minutes?: number }) => federation.getThroughput(options),
    listFailedTasks: federation.listFailedTasks.bind(federation),
    getFailedTask: federation.getFailedTask.bind(federation),
    retryFailedTask: federation.retryFailedTask.bind(federation),
    discardFailedTask: federation.discardFailedTask.bind(federation),
    countFailedTasks: federation.countFailedTasks.bind(federation),
  };
}

test("without authorize, or when it says no or throws, every request gets 403", async () => {
  const setup = await setUp();
  try {
    const refusing = [
      createDashboard(setup.federation, {}),
      createDashboard(setup.federation, { authorize: () => false }),
      createDashboard(setup.federation, {
        // A truthy value that is not true is still a refusal.
        authorize: () => "yes" as unknown as boolean,
      }),
      createDashboard(setup.federation, {
        authorize: () => {
          throw new Error("session store down");
        },
      }),
    ];
    for (const dashboard of refusing) {
      for (const path of ["/", "/api/overview", "/api/failed", `/api/failed/${setup.failedId}`]) {
        assertEquals((await dashboard(new Request(new URL(path, base)))).status, 403, path);
      }
      const replay = await dashboard(
        new Request(new URL(`/api/failed/${setup.failedId}/replay`, base), {
          method: "POST",
          headers: { [DASHBOARD_CSRF_HEADER]: "1" },
        }),
      );
      assertEquals(replay.status, 403);
    }
    assertEquals((await setup.federation.listFailedTasks()).records.length, 1);
    let seen: Request | undefined;
    const dashboard = createDashboard(setup.federation, {
      authorize: async (request) => {
        seen = request;
        await Promise.resolve();
        return request.headers.get("Cookie") === "session=admin";
      },
    });
    const page = new Request(base, { headers: { Cookie: "session=admin" } });
    assertEquals((await dashboard(page)).status, 200);
    assertEquals(seen, page);
    assertEquals((await dashboard(new Request(base))).status, 403);
  } finally {
    await setup.stop();
  }
});

test("createDashboard() rejects invalid options, naming them", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  assertThrows(
    () => createDashboard(federation, { authorize: "admin" as unknown as () => boolean }),
    TypeError,
    "authorize",
  );
  for (const basePath of ["admin", "/a b", "/admin?x", "//evil"]) {
    assertThrows(() => createDashboard(federation, { basePath }), TypeError, "basePath");
  }
  assertThrows(() => createDashboard(federation, { title: "" }), TypeError, "title");
  assertThrows(
    () => createDashboard(federation, { refreshInterval: { milliseconds: 10 } }),
    RangeError,
    "refreshInterval",
  );
  assertThrows(() => createDashboard(federation, { pageSize: 0 }), RangeError, "pageSize");
  assertThrows(
    () => createDashboard({} as unknown as Federation<void>, {}),
    TypeError,
    "federation",
  );
});

test("createDashboard() refuses an unknown option, suggesting the nearest name", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const error = assertThrows(
    () =>
      createDashboard(
        federation,
        {
          authorize: () => true,
          basepath: "/admin",
        } as Parameters<typeof createDashboard>[1],
      ),
    UnknownOptionError,
  );
  assertEquals(error.option, "basepath");
  assertMatch(
    error.message,
    /^Unknown option basepath of createDashboard\(\); did you mean basePath\?/,
  );
});

test("the page and its API answer under basePath only, mounted in a Hono app", async () => {
  const setup = await setUp();
  try {
    const dashboard = createDashboard(setup.federation, {
      authorize: allow,
      basePath: "/admin/queues/",
      title: "Ops <b>board</b>",
    });
    const app = new Hono();
    app.all("/admin/queues", (c) => dashboard(c.req.raw));
    app.all("/admin/queues/*", (c) => dashboard(c.req.raw));
    app.get("/", (c) => c.text("home"));
    const get = (path: string) => app.request(new URL(path, base));

    for (const path of ["/admin/queues", "/admin/queues/"]) {
      const response = await get(path);
      assertEquals(response.status, 200);
      assertMatch(response.headers.get("Content-Type") ?? "", /^text\/html/);
      const csp = response.headers.get("Content-Security-Policy") ?? "";
      assertMatch(csp, /default-src 'none'/);
      assertMatch(csp, /frame-ancestors 'none'/);
      const html = await response.text();
      // The title is escaped; the configuration carries the base path.
      assert(html.includes("<title>Ops &lt;b&gt;board&lt;/b&gt;</title>"));
      assert(html.includes('"basePath":"/admin/queues"'));
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1];
      assert(html.includes(`<script nonce="${nonce}">`));
      // No external resource: everything is inline.
      assertFalse(/\b(src|href)="https?:/.test(html));
    }
    assertEquals(await (await get("/")).text(), "home");
    assertEquals((await dashboard(new Request(new URL("/admin/other", base)))).status, 404);
    assertEquals((await dashboard(new Request(new URL("/admin/queuesX", base)))).status, 404);
    assertEquals((await get("/admin/queues/api/nothing")).status, 404);

    const overview = await (await get("/admin/queues/api/overview")).json();
    assertEquals(overview.queues, [
      { role: "task", queue: "task", depth: { queued: 0, ready: 0, delayed: 0 } },
    ]);
    assertEquals(overview.throughput.length, 60);
    assertEquals(
      overview.throughput.reduce((sum: number, b: { failed: number }) => sum + b.failed, 0),
      1,
    );
    assertEquals(overview.failedCounts, { deliver: 1 });
    assertEquals(typeof overview.features.progress, "boolean");

    const list = await (await get("/admin/queues/api/failed")).json();
    assertEquals(list.cursor, null);
    assertEquals(list.records.length, 1);
    assertEquals(list.records[0].id, setup.failedId);
    assertEquals(list.records[0].taskName, "deliver");
    assertEquals(list.records[0].reason, "permanent");
    assertEquals(list.records[0].error, { name: "PermanentError", message: `refused ${SCRIPT}` });

    const details = await (await get(`/admin/queues/api/failed/${setup.failedId}`)).json();
    assertEquals(
      JSON.parse(details.payload),
      { note: SCRIPT, when: "2026-01-02T03:04:05.000Z" },
    );
    assertMatch(details.stack, /PermanentError/);
    assertEquals((await get("/admin/queues/api/failed/nope")).status, 404);
  } finally {
    await setup.stop();
  }
});

test("replay and discard need the CSRF header and a same-origin request", async () => {
  const setup = await setUp();
  try {
    const dashboard = createDashboard(setup.federation, { authorize: allow });
    const post = (path: string, headers: Record<string, string>) =>
      dashboard(new Request(new URL(path, base), { method: "POST", headers }));
    const replayPath = `/api/failed/${setup.failedId}/replay`;
    assertEquals((await post(replayPath, {})).status, 403);
    assertEquals(
      (await post(replayPath, { [DASHBOARD_CSRF_HEADER]: "1", "Sec-Fetch-Site": "cross-site" }))
        .status,
      403,
    );
    assertEquals((await dashboard(new Request(new URL(replayPath, base)))).status, 404);
    assertEquals(
      (await dashboard(new Request(new URL("/api/failed", base), { method: "DELETE" }))).status,
      405,
    );
    assertEquals((await setup.federation.listFailedTasks()).records.length, 1);

    setup.succeed();
    const replayed = await post(replayPath, {
      [DASHBOARD_CSRF_HEADER]: "1",
      "Sec-Fetch-Site": "same-origin",
    });
    assertEquals(replayed.status, 200);
    assertEquals(await replayed.json(), { status: "enqueued", messageId: setup.failedId });
    await setup.waitFor("completed", 1);
    assertEquals((await setup.federation.listFailedTasks()).records, []);
    const again = await post(replayPath, { [DASHBOARD_CSRF_HEADER]: "1" });
    assertEquals(again.status, 404);

    const discard = await post(`/api/failed/${setup.failedId}/discard`, {
      [DASHBOARD_CSRF_HEADER]: "1",
    });
    assertEquals(await discard.json(), { discarded: false });
  } finally {
    await setup.stop();
  }
});

test("discarding removes the failed task", async () => {
  const setup = await setUp();
  try {
    const dashboard = createDashboard(setup.federation, { authorize: allow });
    const response = await dashboard(
      new Request(new URL(`/api/failed/${setup.failedId}/discard`, base), {
        method: "POST",
        headers: { [DASHBOARD_CSRF_HEADER]: "1" },
      }),
    );
    assertEquals(await response.json(), { discarded: true });
    assertEquals((await setup.federation.listFailedTasks()).records, []);
  } finally {
    await setup.stop();
  }
});

test("cancel needs the CSRF header and says what it did", async () => {
  const setup = await setUp();
  try {
    const dashboard = createDashboard(setup.federation, { authorize: allow });
    const post = (path: string, headers: Record<string, string>) =>
      dashboard(new Request(new URL(path, base), { method: "POST", headers }));
    // A delayed task waits in its queue: cancelled before it runs.
    const result = await setup.federation.createContext(base, undefined).enqueueTask(
      setup.deliver,
      { note: "later", when: new Date() },
      { delay: { hours: 1 } },
    );
    const id = (result as { messageId: string }).messageId;
    const path = `/api/tasks/${id}/cancel`;
    assertEquals((await post(path, {})).status, 403);
    assertEquals((await setup.federation.getTaskStatus(id))?.state, "queued");
    const cancelled = await post(path, { [DASHBOARD_CSRF_HEADER]: "1" });
    assertEquals(await cancelled.json(), { status: "cancelled", state: "queued" });
    const status = await setup.federation.getTaskStatus(id);
    assertEquals(status?.state, "cancelled");
    assertEquals(status?.reason, "cancelled from the dashboard");
    const again = await post(path, { [DASHBOARD_CSRF_HEADER]: "1" });
    assertEquals(await again.json(), { status: "finished", state: "cancelled" });
    const unknown = await post("/api/tasks/nope/cancel", { [DASHBOARD_CSRF_HEADER]: "1" });
    assertEquals(await unknown.json(), { status: "unknown", state: null });
  } finally {
    await setup.stop();
  }
});

test("the events stream carries task updates until the client goes away", async () => {
  const setup = await setUp();
  try {
    const dashboard = createDashboard(setup.federation, { authorize: allow });
    const client = new AbortController();
    const response = await dashboard(
      new Request(new URL("/api/events", base), { signal: client.signal }),
    );
    assertEquals(response.status, 200);
    assertMatch(response.headers.get("Content-Type") ?? "", /^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const events: { id: string; state: string; name: string }[] = [];
    let opened = false;
    const pump = (async () => {
      let received = "";
      while (true) {
        const { done, value } = await reader.read();
        if (done) return;
        received += value;
        const blocks = received.split("\n\n");
        received = blocks.pop()!;
        for (const block of blocks) {
          if (block.startsWith(": connected")) opened = true;
          const data = /^data: (.*)$/m.exec(block);
          if (/^event: task$/m.test(block) && data != null) events.push(JSON.parse(data[1]));
        }
      }
    })();
    await waitUntil(() => opened, { what: "the stream to open" });
    setup.succeed();
    // The subscription becomes active after the stream opens, with no
    // signal of it: enqueue probes until one's update arrives, then replay.
    const ctx = setup.federation.createContext(base, undefined);
    const probes = new Set<string>();
    const probed = () => events.some((e) => probes.has(e.id));
    await within(
      (async () => {
        while (!probed()) {
          const probe = await ctx.enqueueTask(setup.deliver, { note: "probe", when: new Date() });
          probes.add((probe as { messageId: string }).messageId);
          await waitUntil(probed, { what: "a probe's update", timeoutMs: 1000 }).catch(() => {});
        }
      })(),
      "a probe's update",
    );
    await setup.federation.retryFailedTask(setup.failedId);
    await waitUntil(
      () => events.some((e) => e.id === setup.failedId && e.state === "completed"),
      { what: () => `a completed update; got ${JSON.stringify(events)}` },
    );
    assertEquals(events.find((e) => e.id === setup.failedId)?.name, "deliver");
    client.abort();
    await within(pump, "the stream to end");
  } finally {
    await setup.stop();
  }
});

test("panels whose federation method is missing say they are not available", async () => {
  const setup = await setUp();
  try {
    const { federation } = setup;
    const partial = panelsOf02(federation);
    const dashboard = createDashboard(partial, { authorize: allow });
    const overview = await (await dashboard(new Request(new URL("/api/overview", base)))).json();
    assertEquals(overview.features, {
      progress: false,
      hosts: false,
      release: false,
      cancel: false,
      workers: false,
      pause: false,
      steps: false,
    });
    assertEquals(overview.hosts, null);
    assertEquals(overview.workers, null);
    assertEquals(overview.paused, null);
    assertEquals((await dashboard(new Request(new URL("/api/events", base)))).status, 404);
    const html = await (await dashboard(new Request(base))).text();
    assert(
      html.includes(
        '"features":{"progress":false,"hosts":false,"release":false,"cancel":false,"workers":false,' +
          '"pause":false,"steps":false}',
      ),
    );

    const full = createDashboard(federation, { authorize: allow });
    const fullOverview = await (await full(new Request(new URL("/api/overview", base)))).json();
    assertEquals(fullOverview.features, {
      progress: true,
      hosts: true,
      release: true,
      cancel: true,
      workers: true,
      pause: true,
      steps: true,
    });
    assertEquals(fullOverview.paused, { tasks: [], roles: [] });
    assertEquals(fullOverview.hosts, []);
    assert(Array.isArray(fullOverview.workers));
  } finally {
    await setup.stop();
  }
});

test("the workers panel's JSON has each worker's machine, and task updates the worker's", async () => {
  const setup = await setUp();
  const other = new AbortController();
  // Listens to nothing (the set-up's worker took the queue), but registers.
  const second = setup.federation.startQueue(undefined, {
    signal: other.signal,
    machineId: "dashboard-machine-b",
  });
  try {
    const { federation } = setup;
    await waitUntil(async () => (await federation.listWorkers()).length === 2, {
      what: "both workers to register",
    });
    const dashboard = createDashboard(federation, { authorize: allow });
    const overview = await (await dashboard(new Request(new URL("/api/overview", base)))).json();
    const listed = await federation.listWorkers();
    assertEquals(
      overview.workers.map((worker: { id: string; machineId: string }) => [
        worker.id,
        worker.machineId,
      ]),
      listed.map((worker) => [worker.id, worker.machineId]),
    );
    assert(
      overview.workers.some((worker: { machineId: string }) =>
        worker.machineId === "dashboard-machine-b"
      ),
    );
    // A worker of a federation older than 0.4.0 (no machineId) shows its host.
    const [first] = listed;
    const { machineId: _, ...old } = first;
    const legacy = createDashboard({
      ...panelsOf02(federation),
      listWorkers: () => Promise.resolve([old]),
    }, { authorize: allow });
    const legacyOverview = await (await legacy(new Request(new URL("/api/overview", base)))).json();
    assertEquals(legacyOverview.workers[0].machineId, first.host);
    // The failed task's record names the worker that ran it, and so does its JSON.
    const status = await federation.getTaskStatus(setup.failedId);
    const runner = listed.find((worker) => worker.machineId !== "dashboard-machine-b");
    assertEquals([status?.workerId, status?.machineId], [runner?.id, runner?.machineId]);
    const json = await serializeTaskUpdate({ id: setup.failedId, kind: "state", status: status! });
    assertEquals([json.state, json.workerId, json.machineId], [
      "failed",
      runner?.id,
      runner?.machineId,
    ]);
  } finally {
    other.abort();
    await second;
    await setup.stop();
  }
});

test("the workers panel shows how many messages each queue runs at once", async () => {
  const setup = await setUp();
  try {
    const { federation } = setup;
    await waitUntil(async () => (await federation.listWorkers()).length > 0, {
      what: "the worker to register",
    });
    const dashboard = createDashboard(federation, { authorize: allow });
    const overview = await (await dashboard(new Request(new URL("/api/overview", base)))).json();
    // The set-up's worker listens to the task role of one InProcessMessageQueue.
    assertEquals(overview.workers.map((worker: { queues: string[] }) => worker.queues), [[
      "task × 1",
    ]]);

    // A source whose queues do not tell their concurrency shows the roles alone.
    const [listed] = await federation.listWorkers();
    const untold = createDashboard({
      ...panelsOf02(federation),
      listWorkers: () =>
        Promise.resolve([{
          ...listed,
          queues: [{ roles: "inbox, outbox", concurrency: null }, { roles: "task" }],
        }]),
    }, { authorize: allow });
    const plain = await (await untold(new Request(new URL("/api/overview", base)))).json();
    assertEquals(plain.workers[0].queues, ["inbox, outbox", "task"]);
  } finally {
    await setup.stop();
  }
});

test("a quarantined inbox message is listed as poison with its activity and replayed into the inbox queue", async () => {
  const inbox = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox },
    manuallyStartQueue: true,
  });
  federation.setInboxListeners("/users/{identifier}/inbox");
  const id = crypto.randomUUID();
  // Handed out a sixth time by a push-based queue: over the default limit.
  await federation.processQueuedMessage(undefined, {
    type: "inbox",
    id,
    baseUrl: "https://web.example",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: {
      "@context": "https://www.w3.org/ns/activitystreams",
      type: "Follow",
      id: "https://remote.example/follows/1",
      actor: "https://remote.example/users/bob",
      object: "https://web.example/users/alice",
    },
    identifier: "alice",
  }, { deliveryCount: 6 });
  const dashboard = createDashboard(federation, { authorize: allow });
  const list = await (await dashboard(new Request(new URL("/api/failed", base)))).json();
  assertEquals(list.records.length, 1);
  assertEquals(list.records[0].kind, "inbox");
  assertEquals(list.records[0].reason, "poison");
  assertEquals(list.records[0].message, {
    activityType: "Follow",
    activityId: "https://remote.example/follows/1",
    deliveries: 6,
  });
  assertEquals(list.records[0].error.name, "PoisonMessageError");
  const replayed = await dashboard(
    new Request(new URL(`/api/failed/${id}/replay`, base), {
      method: "POST",
      headers: { [DASHBOARD_CSRF_HEADER]: "1", "Sec-Fetch-Site": "same-origin" },
    }),
  );
  assertEquals(await replayed.json(), { status: "enqueued", messageId: id });
  assertEquals((await inbox.getDepth()).queued, 1);
  assertEquals((await federation.listFailedTasks()).records, []);
});
