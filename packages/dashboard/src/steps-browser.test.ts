// A task's durable steps on the dashboard: GET /api/tasks/:id/steps over
// real HTTP on loopback, and in a real browser (the system's headless
// Chromium) the Steps button of a live task that waits for an event,
// listing its recorded step and the one it waits at, then the task ends.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import { z } from "zod";
import { createDashboard } from "./mod.ts";
import { serve } from "./testdata/serve.ts";

const SCRIPT = "<img src=x onerror=alert(1)>";

interface StepsBody {
  readonly current: string | null;
  readonly steps: { id: string; kind: string; state: string; until: string | null }[];
}

test("the dashboard lists a live task's steps and the one it waits at, in JSON and in a browser", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("approve-import", {
    schema: z.object({ key: z.string() }),
    async handler(ctx, { key }) {
      // A step id is the application's text: the page shows it as text.
      await ctx.step.run(`look up ${SCRIPT}`, () => 1);
      return await ctx.step.waitForEvent<string>("approval", {
        event: "approved",
        key,
        timeout: { hours: 1 },
      });
    },
  });
  const ping = federation.defineTask("ping", { schema: z.object({}), handler() {} });
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const dashboard = createDashboard(federation, {
    basePath: "/admin",
    refreshInterval: { seconds: 1 },
    authorize: () => true,
  });
  const server = await serve(dashboard);
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-steps-"));
  const steps = async (id: string) =>
    await (await fetch(`${server.url}/admin/api/tasks/${encodeURIComponent(id)}/steps`))
      .json() as StepsBody;
  try {
    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = await browser.newPage();
      const alerts: string[] = [];
      page.on("dialog", (dialog) => {
        alerts.push(dialog.message());
        void dialog.dismiss();
      });
      assertEquals((await page.goto(`${server.url}/admin/`))?.status(), 200);
      // The page must be listening to task updates before the waiting task
      // is enqueued (it sends none while it waits): pings until one shows.
      const ctx = federation.createContext(new URL(server.url), undefined);
      await waitUntil(async () => {
        await ctx.enqueueTask(ping, {});
        return await page.locator("#progress tr.task-progress").count() > 0;
      }, { what: "the page to receive task updates", intervalMs: 100 });
      const enqueued = await ctx.enqueueTask(task, { key: "import-1" });
      assert(enqueued.status === "enqueued");
      const id = enqueued.messageId;
      await waitUntil(async () => (await steps(id)).current === "approval", {
        what: "the task to wait at its approval step",
      });
      const body = await steps(id);
      assertEquals(body.steps.map((step) => [step.id, step.kind, step.state]), [
        [`look up ${SCRIPT}`, "run", "done"],
        ["approval", "wait", "waiting"],
      ]);
      assert(body.steps[1].until != null, "a pending wait says until when");

      const row = page.locator(`#progress tr.task-progress[data-id="${id}"]`);
      // The row says where the task is from its status updates alone.
      await row.locator(".task-step", { hasText: "at approval (waiting), 1 step recorded" })
        .waitFor({ timeout: 30_000 });
      await row.locator("button.steps-toggle").click({ timeout: 30_000 });
      const listed = page.locator(`#progress tr[data-steps-of="${id}"] li.step`);
      await waitUntil(async () => await listed.count() === 2, { what: "the steps to be listed" });
      assertEquals(await listed.nth(0).locator(".step-id").textContent(), `look up ${SCRIPT}`);
      assertEquals(await listed.nth(1).getAttribute("aria-current"), "step");
      assertEquals(await listed.nth(1).getAttribute("data-step"), "approval");
      assertEquals(
        (await listed.nth(1).locator(".step-state").textContent())?.startsWith("waiting until"),
        true,
      );
      assertEquals(await page.locator(`#progress img`).count(), 0);

      // The event ends the task: its records go, and the open row says so.
      await federation.sendEvent("approved", { key: "import-1", data: "yes" });
      await waitUntil(async () => (await federation.getTaskStatus(id))?.state === "completed", {
        what: "the task to complete",
      });
      await waitUntil(async () => (await steps(id)).steps.length === 0, {
        what: "the records to be deleted",
      });
      const open = page.locator(`#progress tr[data-steps-of="${id}"]`);
      await waitUntil(
        async () => (await open.textContent())?.includes("No recorded steps") ?? false,
        { what: "the open row to say the steps are gone" },
      );
      assertEquals(alerts, []);
    } finally {
      await browser.close();
    }
  } finally {
    controller.abort();
    await workers;
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
