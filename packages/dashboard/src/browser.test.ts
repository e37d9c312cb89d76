// The dashboard in a real browser (the system's headless Chromium, driven
// by playwright-core), served by a real HTTP server on loopback and mounted
// in a Hono app: a task failed for good shows with its payload as text
// (a <script> in it stays text), Replay enqueues it again once its handler
// works, and the page sees it complete.  Writes docs/images/dashboard.png.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";
import { join, resolve } from "node:path";
import {
  assert,
  assertEquals,
  assertMatch,
  deferred,
  delay,
  startTestServer,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import {
  createFederation,
  generateCryptoKeyPair,
  InProcessMessageQueue,
  MemoryKvStore,
  millisecondsToDuration,
  PermanentError,
} from "@fedwork/core";
import { Hono } from "hono";
import { launchChromium } from "@fedify/fixture/browser";
import { z } from "zod";
import { createDashboard } from "./mod.ts";
import { serve } from "./testdata/serve.ts";

// The manual's screenshot is rewritten only on request
// (`FEDWORK_UPDATE_SCREENSHOTS=1`), so that a test run leaves the working
// tree as it found it; otherwise the screenshot goes to a temporary folder.
const SCREENSHOT = process.env.FEDWORK_UPDATE_SCREENSHOTS === "1"
  ? resolve(import.meta.dirname!, "../../../docs/images/dashboard.png")
  : join(tmpdir(), `fedwork-dashboard-${process.pid}.png`);
const SCRIPT = "<script>alert(1)</script><img src=x onerror=alert(2)>";

test("in a browser, Replay on a failed task runs it again and the page sees it complete", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue(), outbox: new InProcessMessageQueue() },
    manuallyStartQueue: true,
    taskRetryPolicy: ({ attempts }) => attempts < 2 ? millisecondsToDuration(1) : null,
    // A remote inbox that answers 503 becomes unhealthy at its first failure;
    // its probe waits an hour, past the test's end.
    allowPrivateAddress: true,
    hostHealth: { failureThreshold: 1, initialProbeDelay: { hours: 1 } },
  });
  const keyPair = await generateCryptoKeyPair();
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0].cryptographicKey,
    })).setKeyPairsDispatcher(() => [keyPair]);
  await using downInbox = await startTestServer(() => new Response("down", { status: 503 }));
  let storageUp = false;
  const resize = federation.defineTask("resize-image", {
    schema: z.object({ url: z.string(), width: z.number(), caption: z.string() }),
    handler() {
      if (!storageUp) throw new PermanentError("the object storage refused the upload (403)");
    },
  });
  const digest = federation.defineTask("send-digest", {
    schema: z.object({ user: z.string() }),
    handler(_ctx, { user }) {
      if (user === "mallory") throw new Error("SMTP connection reset");
    },
  });
  // A long task on a queue of its own reports progress until released.
  let importing = true;
  const importFollowers = federation.defineTask("import-followers", {
    schema: z.object({ account: z.string() }),
    queue: new InProcessMessageQueue(),
    async handler(ctx, { account }) {
      while (importing) {
        await ctx.task.reportProgress({ percent: 40, data: { account, imported: 400, of: 1000 } });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  });
  const finished = { completed: 0, failed: 0 };
  const completedIds = new Set<string>();
  const waiters: { check(): boolean; resolve(): void }[] = [];
  for (const type of ["completed", "failed"] as const) {
    federation.on(type, (event) => {
      finished[type]++;
      if (type === "completed") completedIds.add(event.messageId);
      for (const waiter of waiters) if (waiter.check()) waiter.resolve();
    });
  }
  const until = (check: () => boolean, what: string) => {
    if (check()) return Promise.resolve();
    const { promise, resolve } = deferred();
    waiters.push({ check, resolve });
    return within(promise, () => `${what}; got ${JSON.stringify(finished)}`);
  };
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-browser-"));
  const dashboard = createDashboard(federation, {
    basePath: "/admin/queues",
    title: "Fedwork dashboard",
    refreshInterval: { seconds: 1 },
    authorize: (request) => request.headers.get("Cookie") === "session=operator",
  });
  const app = new Hono();
  app.all("/admin/queues", (c) => dashboard(c.req.raw));
  app.all("/admin/queues/*", (c) => dashboard(c.req.raw));
  const server = await serve(async (request) => await app.fetch(request));
  try {
    const ctx = federation.createContext(new URL(server.url), undefined);
    for (const user of ["alice", "bob", "carol", "dave"]) await ctx.enqueueTask(digest, { user });
    const { messageId } = await ctx.enqueueTask(resize, {
      url: "https://media.example/cat.png",
      width: 640,
      caption: SCRIPT,
    }) as { messageId: string };
    await ctx.enqueueTask(digest, { user: "mallory" });
    await until(() => finished.completed >= 4 && finished.failed >= 2, "4 completed, 2 failed");
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: new URL("https://down.example/users/bob"), inboxId: new URL("/inbox", downInbox.url) },
      new Create({
        id: new URL("/activities/1", server.url),
        actor: ctx.getActorUri("alice"),
        object: new Note({ content: "Hello" }),
      }),
    );
    await waitUntil(async () => (await federation.listUnhealthyHosts()).length === 1, {
      what: "the remote inbox's host to be unhealthy",
    });

    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const dialogs: string[] = [];
      const page = await browser.newPage();
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        dialog.dismiss().catch(() => {});
      });
      // Without the session cookie, authorize refuses.
      assertEquals((await page.goto(`${server.url}/admin/queues/`))?.status(), 403);
      await browser.addCookies([{
        name: "session",
        value: "operator",
        url: server.url,
      }]);
      const response = await page.goto(`${server.url}/admin/queues/`);
      assertEquals(response?.status(), 200);

      const row = page.locator(`tr.failed-task[data-id="${messageId}"]`);
      await row.waitFor({ timeout: 30_000 });
      assertEquals(await row.locator(".task-name").textContent(), "resize-image");
      assertMatch(await row.locator(".error").innerText(), /object storage refused/);
      assertEquals(await page.locator("#failed-count").textContent(), "2");
      await page.locator("#queues tbody tr").first().waitFor();
      // The totals are the federation's (the parked delivery counts too).
      const before = { completed: 0, failed: 0, retried: 0 };
      for (const bucket of await federation.getThroughput()) {
        before.completed += bucket.completed;
        before.failed += bucket.failed;
        before.retried += bucket.retried;
      }
      assert(before.completed >= 4 && before.failed >= 2 && before.retried >= 1);
      for (const [name, count] of Object.entries(before)) {
        await page.locator(`#total-${name}`, { hasText: new RegExp(`^${count}$`) })
          .waitFor({ timeout: 30_000 });
      }
      const hostRow = page.locator("#hosts tbody tr");
      await hostRow.first().waitFor({ timeout: 30_000 });
      assertEquals(await hostRow.locator("td").first().textContent(), downInbox.url.host);
      // The workers panel lists this process's worker, from its heartbeat.
      const workerRow = page.locator("#workers tbody tr.worker");
      await workerRow.first().waitFor({ timeout: 30_000 });
      const [listed] = await federation.listWorkers();
      assertEquals(await workerRow.count(), 1);
      assertEquals(await workerRow.getAttribute("data-worker"), listed.id);
      assertEquals(await workerRow.locator("td").nth(1).textContent(), String(process.pid));
      assertMatch(await workerRow.locator(".worker-state").innerText(), /^(busy|idle)$/);
      // Under a heading for its machine.
      const machineRow = page.locator("#workers tbody tr.machine");
      assertEquals(await machineRow.count(), 1);
      assertEquals(await machineRow.getAttribute("data-machine"), listed.machineId);
      assertEquals(await workerRow.getAttribute("data-machine"), listed.machineId);
      assertMatch(await machineRow.innerText(), /^\S+ \u2014 1 worker, [01] busy$/);

      // The payload shows as text: the <script> is not markup and never ran.
      await row.getByRole("button", { name: "Details" }).click();
      const payload = page.locator(`tr.failed-details[data-id="${messageId}"] pre.payload`);
      await payload.waitFor({ timeout: 30_000 });
      assert((await payload.textContent())!.includes(SCRIPT));
      assertEquals(await page.locator("main script").count(), 0);
      assertEquals(dialogs, []);
      // Live progress: a running task's reports reach the page.
      const live = typeof (federation as { watchTasks?: unknown }).watchTasks === "function";
      const { messageId: importId } = await ctx.enqueueTask(importFollowers, {
        account: "alice@old.example",
      }) as { messageId: string };
      const importRow = page.locator(`tr.task-progress[data-id="${importId}"]`);
      if (live) {
        await importRow.locator(".state", { hasText: "running" }).waitFor({ timeout: 30_000 });
        assertMatch(await importRow.innerText(), /40%/);
      } else {
        assert(await page.locator("#progress-unavailable").isVisible());
      }

      storageUp = true;
      await row.getByRole("button", { name: "Replay" }).click();
      await row.waitFor({ state: "detached", timeout: 30_000 });
      assertMatch(await page.locator("#notice").innerText(), /Replayed resize-image/);
      await until(() => completedIds.has(messageId), "the replayed task to complete");
      // The page sees it complete: the completed count rises and, when
      // the federation reports task updates, the live panel says so.
      await waitUntil(
        async () => Number(await page.locator("#total-completed").textContent()) > before.completed,
        { what: "the page to count the replayed task as completed" },
      );
      if (live) {
        await page.locator(`tr.task-progress[data-id="${messageId}"] .state`, {
          hasText: "completed",
        }).waitFor({ timeout: 30_000 });
      }

      // The remaining failed task, its details open, for the manual's screenshot.
      const digestRow = page.locator("tr.failed-task", { hasText: "send-digest" });
      await digestRow.getByRole("button", { name: "Details" }).click();
      await page.locator("tr.failed-details pre.payload").waitFor({ timeout: 30_000 });
      await mkdir(resolve(SCREENSHOT, ".."), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      importing = false;
      if (live) {
        await importRow.locator(".state", { hasText: "completed" }).waitFor({ timeout: 30_000 });
      }
      assertEquals(await page.locator("#failed-count").textContent(), "1");
      assertEquals((await federation.listFailedTasks()).records.map((r) => r.taskName), [
        "send-digest",
      ]);
      assertEquals(dialogs, []);
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
    controller.abort();
    await worker;
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("in a browser, deliveries to an inbox down past the give-up limit show as failed, and replay delivers them once after Release", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { outbox: new InProcessMessageQueue() },
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: ({ attempts }) => attempts < 20 ? millisecondsToDuration(10) : null,
    // Unhealthy after two failures, dead after two failed probes.
    hostHealth: {
      failureThreshold: 2,
      initialProbeDelay: { milliseconds: 20 },
      maxProbeDelay: { milliseconds: 40 },
      maxProbeAttempts: 2,
      deadHostCooldown: false,
    },
  });
  const keyPair = await generateCryptoKeyPair();
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0].cryptographicKey,
    })).setKeyPairsDispatcher(() => [keyPair]);
  let up = false;
  const received: string[] = [];
  await using inbox = await startTestServer(async (request) => {
    if (!up) return new Response("down", { status: 503 });
    if (request.method === "POST") received.push((await request.json()).id);
    return new Response(null, { status: 202 });
  });
  const completed = new Set<string>();
  federation.on("completed", (event) => {
    if (event.kind === "outbox") completed.add(event.messageId);
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-outage-"));
  const dashboard = createDashboard(federation, {
    basePath: "/admin",
    refreshInterval: { seconds: 1 },
    authorize: () => true,
  });
  const server = await serve(dashboard);
  try {
    const ctx = federation.createContext(new URL(server.url), undefined);
    const ids = [1, 2, 3].map((n) => new URL(`/activities/${n}`, server.url).href);
    for (const id of ids) {
      await ctx.sendActivity(
        { identifier: "alice" },
        { id: new URL("https://down.example/users/bob"), inboxId: new URL("/inbox", inbox.url) },
        new Create({
          id: new URL(id),
          actor: ctx.getActorUri("alice"),
          object: new Note({ content: "Hello" }),
        }),
      );
    }
    await waitUntil(
      async () =>
        (await federation.countFailedTasks({ kind: "delivery" })).size === 1 &&
        (await federation.countFailedTasks()).get("fedwork:delivery") === 3,
      { what: "the three deliveries to fail for good" },
    );
    assertEquals((await federation.getHostHealth(inbox.url.host))?.dead, true);

    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = await browser.newPage();
      assertEquals((await page.goto(`${server.url}/admin/`))?.status(), 200);
      const rows = page.locator("tr.failed-delivery");
      await waitUntil(async () => await rows.count() === 3, { what: "three failed deliveries" });
      assertMatch(await rows.first().innerText(), /delivery of Create/);
      assert((await rows.first().innerText()).includes(new URL("/inbox", inbox.url).href));
      const hostRow = page.locator(`#hosts tr.host[data-host="${inbox.url.host}"]`);
      await hostRow.locator(".host-state", { hasText: "dead" }).waitFor({ timeout: 30_000 });

      // While the host is dead, a replay is refused and the record kept.
      await rows.first().getByRole("button", { name: "Replay" }).click();
      await page.locator("#notice.error", { hasText: "dead" }).waitFor({ timeout: 30_000 });
      assertEquals(await rows.count(), 3);

      up = true;
      await hostRow.getByRole("button", { name: "Release" }).click();
      await hostRow.waitFor({ state: "detached", timeout: 30_000 });
      assertEquals((await federation.getHostHealth(inbox.url.host))?.healthy, true);
      // Parking completed these messages once already; count the replays only.
      completed.clear();
      for (let left = 3; left > 0; left--) {
        await rows.first().getByRole("button", { name: "Replay" }).click();
        await waitUntil(async () => await rows.count() === left - 1, {
          what: `${left - 1} failed deliveries left`,
        });
      }
      await waitUntil(() => completed.size === 3, {
        what: () => `the three replays to complete; got ${completed.size}`,
      });
      // Each activity reached the inbox exactly once.
      assertEquals([...received].sort(), [...ids].sort());
      assertEquals((await federation.countFailedTasks()).size, 0);
      await page.locator("#failed-empty").waitFor({ state: "visible", timeout: 30_000 });
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
    controller.abort();
    await worker;
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("in a browser, Cancel on a running task aborts its signal and the page shows it cancelled", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const reasons: unknown[] = [];
  const transcode = federation.defineTask("transcode", {
    schema: z.object({ post: z.string() }),
    async handler(ctx) {
      // Reports until cancelled, so that the page sees it whenever it
      // subscribed.
      while (!ctx.task.signal.aborted) {
        await ctx.task.reportProgress(10);
        await delay(1000);
      }
      reasons.push(ctx.task.signal.reason);
      throw ctx.task.signal.reason;
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-cancel-"));
  const server = await serve(createDashboard(federation, {
    basePath: "/admin",
    refreshInterval: { seconds: 1 },
    authorize: () => true,
  }));
  try {
    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = await browser.newPage();
      assertEquals((await page.goto(`${server.url}/admin/`))?.status(), 200);
      const ctx = federation.createContext(new URL(server.url), undefined);
      const { messageId } = await ctx.enqueueTask(transcode, { post: "deleted" }) as {
        messageId: string;
      };
      const row = page.locator(`tr.task-progress[data-id="${messageId}"]`);
      await row.locator(".state", { hasText: "running" }).waitFor({ timeout: 30_000 });
      await row.getByRole("button", { name: "Cancel" }).click();
      await row.getByRole("button", { name: "Really cancel?" }).click();
      await row.locator(".state", { hasText: "cancelled" }).waitFor({ timeout: 30_000 });
      assertMatch(await page.locator("#progress-notice").innerText(), /Cancelled transcode/);
      // An ended task has no Cancel button.
      assertEquals(await row.getByRole("button").count(), 0);
      assertEquals((await federation.getTaskStatus(messageId))?.state, "cancelled");
      assertEquals(
        (reasons[0] as { reason?: string }).reason,
        "cancelled from the dashboard",
      );
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
    controller.abort();
    await worker;
    await rm(dataDir, { recursive: true, force: true });
  }
});
