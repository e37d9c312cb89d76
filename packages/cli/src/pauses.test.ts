// `fedwork pause`, `resume`, `paused` and the PAUSED column of `queues`, in
// child processes against the SQLite file whose workers run here: a task
// paused from the CLI waits until the CLI resumes it.
import { assert, assertEquals, assertMatch, test, waitUntil, within } from "@fedify/fixture";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCliTestFederation } from "./testdata/federation.ts";
import { runFedwork } from "./testdata/run-cli.ts";

test("fedwork pause holds a task until fedwork resume, and queues shows what is paused", async () => {
  const namespace = `fedwork-cli-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const path = join(tmpdir(), `${namespace}.sqlite`);
  const env = { FEDWORK_CLI_TEST_BACKEND: "sqlite", FEDWORK_CLI_TEST_TARGET: path };
  const fedwork = (...args: string[]) => runFedwork(["--app", "./testdata/app.ts", ...args], env);
  const made = await createCliTestFederation({ backend: "sqlite", path }, { broken: false });
  const controller = new AbortController();
  const workers = made.federation.startQueue(undefined, { signal: controller.signal });
  try {
    const pause = await fedwork("pause", "flaky");
    assertEquals([pause.code, pause.stdout], [0, "Paused task flaky.\n"], pause.stderr);
    const role = await fedwork("pause", "--role", "outbox", "--json");
    assertEquals(role.code, 0, role.stderr);
    assertEquals(JSON.parse(role.stdout), { tasks: ["flaky"], roles: ["outbox"] });
    // The workers here hear of it over SqlitePubSub (or at their refresh).
    await waitUntil(
      async () => (await made.federation.listPaused()).tasks.includes("flaky"),
      { what: "the pause to be stored" },
    );

    const ctx = made.federation.createContext(new URL("https://cli.example/"), undefined);
    const held = await ctx.enqueueTask(made.tasks.flaky, { n: 1 });
    assert(held.status === "enqueued");
    const queues = await fedwork("queues");
    assertEquals(queues.code, 0, queues.stderr);
    assertMatch(queues.stdout, /^ROLE +QUEUE +QUEUED +READY +DELAYED +PAUSED$/m);
    assertMatch(queues.stdout, /^outbox .* yes$/m);
    assertMatch(queues.stdout, /^inbox .* no$/m);
    assertMatch(queues.stdout, /^Paused tasks: flaky$/m);
    const json = await fedwork("queues", "--json");
    const entries = JSON.parse(json.stdout) as { role: string; paused: boolean }[];
    assertEquals(
      entries.filter((entry) => entry.paused).map((entry) => entry.role),
      ["outbox"],
    );
    assertEquals((await made.federation.getTaskStatus(held.messageId))?.state, "queued");

    const resume = await fedwork("resume", "flaky");
    assertEquals([resume.code, resume.stdout], [0, "Resumed task flaky.\n"], resume.stderr);
    await waitUntil(
      async () => (await made.federation.getTaskStatus(held.messageId))?.state === "completed",
      { what: "the resumed task to complete", timeoutMs: 60_000 },
    );
    const resumeRole = await fedwork("resume", "--role", "outbox");
    assertEquals([resumeRole.code, resumeRole.stdout], [0, "Resumed the outbox role.\n"]);
    const paused = await fedwork("paused");
    assertEquals([paused.code, paused.stdout], [0, "Nothing is paused.\n"]);

    for (
      const args of [["pause"], ["pause", "flaky", "--role", "task"], ["resume", "--role", "web"]]
    ) {
      const wrong = await fedwork(...args);
      assertEquals(wrong.code, 2, `fedwork ${args.join(" ")}: ${wrong.stderr}`);
    }
    const wrongRole = await fedwork("pause", "--role", "web");
    assertMatch(wrongRole.stderr, /--role must be one of inbox, outbox, fanout, task; got web/);
  } finally {
    controller.abort();
    await within(workers, "the workers to stop", 30_000).catch(() => {});
    await made.close();
    for (const suffix of ["", "-wal", "-shm"]) await rm(`${path}${suffix}`, { force: true });
  }
});
