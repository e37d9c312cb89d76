// Pausing and resuming from the dashboard over real HTTP on loopback: the
// toggles need the CSRF header, the overview and the page show what is
// paused, and a task paused from the dashboard waits in its queue until
// the dashboard resumes it.
import { assert, assertEquals, assertMatch, test, waitUntil } from "@fedify/fixture";
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import { z } from "zod";
import { createDashboard, DASHBOARD_CSRF_HEADER } from "./mod.ts";
import { serve } from "./testdata/serve.ts";

test("the dashboard pauses and resumes a task and a role, with its CSRF guard", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
  });
  const ran: number[] = [];
  const count = federation.defineTask("count", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, { n }) => void ran.push(n),
  });
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const dashboard = createDashboard(federation, { basePath: "/admin", authorize: () => true });
  const server = await serve(dashboard);
  const post = (path: string, csrf = true) =>
    fetch(`${server.url}/admin/api/paused/${path}`, {
      method: "POST",
      headers: csrf ? { [DASHBOARD_CSRF_HEADER]: "1" } : {},
    });
  const overview = async () =>
    await (await fetch(`${server.url}/admin/api/overview`)).json() as {
      features: { pause: boolean };
      paused: { tasks: string[]; roles: string[] };
      queues: { role: string; depth: { delayed: number | null } | null }[];
    };
  try {
    assertEquals((await overview()).features.pause, true);
    const refused = await post("task/count/pause", false);
    assertEquals(refused.status, 403);
    await refused.body?.cancel();
    assertEquals((await overview()).paused, { tasks: [], roles: [] });

    const paused = await post("task/count/pause");
    assertEquals(paused.status, 200);
    assertEquals(await paused.json(), { paused: { tasks: ["count"], roles: [] } });
    const role = await post("role/outbox/pause");
    assertEquals(await role.json(), { paused: { tasks: ["count"], roles: ["outbox"] } });
    const unknown = await post("role/web/pause");
    assertEquals(unknown.status, 422);
    await unknown.body?.cancel();

    await federation.createContext(new URL(server.url), undefined).enqueueTask(count, { n: 1 });
    // The worker took it and put it back, due later: delayed, not run.
    await waitUntil(async () => {
      const task = (await overview()).queues.find((entry) => entry.role === "task");
      return task?.depth?.delayed === 1;
    }, { what: "the paused task to be put back" });
    assertEquals(ran, []);
    const page = await (await fetch(`${server.url}/admin/`)).text();
    assertMatch(page, /<th>Paused<\/th>/);
    assertMatch(page, /id="pause-form"/);

    const resumed = await post("task/count/resume");
    assertEquals(await resumed.json(), { paused: { tasks: [], roles: ["outbox"] } });
    await waitUntil(() => ran.length === 1, { what: "the task to run after resume" });
    assertEquals(ran, [1]);
    const roleResumed = await post("role/outbox/resume");
    assertEquals(await roleResumed.json(), { paused: { tasks: [], roles: [] } });
    assert((await federation.listPaused()).roles.length === 0);
  } finally {
    controller.abort();
    await workers;
    await server.close();
  }
});
