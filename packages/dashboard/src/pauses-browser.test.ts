// Pausing and resuming from the dashboard's page in a real browser (the
// system's headless Chromium): Pause on the task role's row, a task paused
// by name in the form, and their Resume buttons, each reaching the
// federation through the page's own POST requests.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, test, waitUntil } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import { z } from "zod";
import { createDashboard } from "./mod.ts";
import { serve } from "./testdata/serve.ts";

test("in a browser, Pause and Resume toggle a role and a task", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
  });
  federation.defineTask("import", { schema: z.object({}), handler() {} });
  const dashboard = createDashboard(federation, {
    basePath: "/admin",
    refreshInterval: { seconds: 1 },
    authorize: () => true,
  });
  const server = await serve(dashboard);
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-pause-"));
  try {
    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = await browser.newPage();
      assertEquals((await page.goto(`${server.url}/admin/`))?.status(), 200);
      const taskRow = page.locator('#queues tr[data-role="task"]');
      await taskRow.locator("button.pause-role").click({ timeout: 30_000 });
      await taskRow.locator("button.resume-role").waitFor({ timeout: 30_000 });
      assertEquals(await federation.listPaused(), { tasks: [], roles: ["task"] });

      await page.locator("#pause-task").fill("import");
      await page.locator('#pause-form button[type="submit"]').click();
      const resumeTask = page.locator("#paused-tasks button.resume-task");
      await resumeTask.waitFor({ timeout: 30_000 });
      assertEquals(await federation.listPaused(), { tasks: ["import"], roles: ["task"] });

      await resumeTask.click();
      await taskRow.locator("button.resume-role").click();
      await waitUntil(async () => {
        const paused = await federation.listPaused();
        return paused.tasks.length === 0 && paused.roles.length === 0;
      }, { what: "both to be resumed" });
      await taskRow.locator("button.pause-role").waitFor({ timeout: 30_000 });
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
