// The `fedwork` program operating a real federation, in child processes,
// against the same SQLite file or PostgreSQL tables as the test process,
// which runs the workers: a failed task listed, shown, replayed to
// completion and discarded; cancellation; an unhealthy host released; the
// listings; and `tail` printing live updates.
import {
  assert,
  assertEquals,
  assertMatch,
  startTestServer,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { rm } from "node:fs/promises";
import process from "node:process";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import {
  type CliTestBackend,
  type CliTestFederation,
  type CliTestState,
  createCliTestFederation,
  POSTGRES_URL,
} from "./testdata/federation.ts";
import { runFedwork, startFedwork } from "./testdata/run-cli.ts";

const APP = "./testdata/app.ts";
const BASE = new URL("https://cli.example/");

interface Setup extends CliTestFederation {
  readonly state: CliTestState;
  /** Runs fedwork --app APP against this federation's state. */
  fedwork(...args: string[]): ReturnType<typeof runFedwork>;
  /** Starts fedwork --app APP against this federation's state. */
  start(...args: string[]): ReturnType<typeof startFedwork>;
}

/** Runs `body` with a fresh federation on `kind` whose workers run here. */
async function withFederation(
  kind: "sqlite" | "postgres",
  body: (setup: Setup) => Promise<void>,
): Promise<void> {
  // A namespace of its own: tables, a pub/sub prefix, a file.
  const namespace = `fedwork-cli-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const path = join(tmpdir(), `${namespace}.sqlite`);
  const backend: CliTestBackend = kind === "sqlite"
    ? { backend: "sqlite", path }
    : { backend: "postgres", namespace };
  const env = {
    FEDWORK_CLI_TEST_BACKEND: kind,
    FEDWORK_CLI_TEST_TARGET: kind === "sqlite" ? path : namespace,
  };
  const state: CliTestState = { broken: true };
  const made = await createCliTestFederation(backend, state);
  const controller = new AbortController();
  const workers = made.federation.startQueue(undefined, { signal: controller.signal });
  try {
    await body({
      ...made,
      state,
      fedwork: (...args) => runFedwork(["--app", APP, ...args], env),
      start: (...args) => startFedwork(["--app", APP, ...args], env),
    });
  } finally {
    controller.abort();
    await within(workers, "the workers to stop", 30_000).catch(() => {});
    await made.close();
    if (kind === "sqlite") {
      for (const suffix of ["", "-wal", "-shm"]) await rm(`${path}${suffix}`, { force: true });
    } else {
      const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
      try {
        const table = namespace.replaceAll("-", "_");
        await sql.unsafe(`DROP TABLE IF EXISTS "${table}", "${table}_kv"`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    }
  }
}

async function stateOf(setup: Setup, id: string): Promise<string | undefined> {
  return (await setup.federation.getTaskStatus(id))?.state;
}

for (const kind of ["sqlite", "postgres"] as const) {
  test(`on ${kind}, fedwork failed list shows a failed task, replay runs it to completion (then listed as completed), discard removes one`, async () => {
    await withFederation(kind, async (setup) => {
      const ctx = setup.federation.createContext(BASE, undefined);
      const first = await ctx.enqueueTask(setup.tasks.flaky, { n: 1 });
      assert(first.status === "enqueued");
      const id = first.messageId;
      await waitUntil(async () => (await stateOf(setup, id)) === "failed", {
        what: "the task to fail",
      });

      const list = await setup.fedwork("failed", "list");
      assertEquals(list.code, 0, list.stderr);
      assertMatch(list.stdout, /^ID +TASK +KIND +REASON +ATTEMPTS +FINISHED +ERROR$/m);
      const row = list.stdout.split("\n").find((line) => line.startsWith(id));
      assert(row != null, list.stdout);
      assertMatch(row, /flaky +task +exhausted +1 .*Error: flaky is broken$/);
      const json = await setup.fedwork("failed", "list", "--json");
      assertEquals(json.code, 0, json.stderr);
      const page = JSON.parse(json.stdout);
      assertEquals(page.records.map((record: { id: string }) => record.id), [id]);
      assertEquals(page.records[0].error, { name: "Error", message: "flaky is broken" });

      const show = await setup.fedwork("failed", "show", id);
      assertEquals(show.code, 0, show.stderr);
      assertMatch(show.stdout, /^error: +Error: flaky is broken$/m);
      assertMatch(show.stdout, /^payload:\n {2}\{\n {4}"n": 1\n {2}\}$/m);

      setup.state.broken = false;
      const replay = await setup.fedwork("failed", "replay", id);
      assertEquals([replay.code, replay.stdout], [0, `Queued ${id} again.\n`], replay.stderr);
      await waitUntil(async () => (await stateOf(setup, id)) === "completed", {
        what: "the replayed task to complete",
        timeoutMs: 60_000,
      });
      const completed = await setup.fedwork("completed", "--task", "flaky", "--json");
      assertEquals(completed.code, 0, completed.stderr);
      assertEquals(JSON.parse(completed.stdout).records.map((r: { id: string }) => r.id), [id]);
      const gone = await setup.fedwork("failed", "show", id);
      assertEquals([gone.code, gone.stdout, gone.stderr], [
        1,
        "",
        `fedwork: no failed task "${id}".\n`,
      ]);
      const again = await setup.fedwork("failed", "replay", id);
      assertEquals([again.code, again.stderr], [1, `fedwork: no failed task "${id}".\n`]);

      setup.state.broken = true;
      const second = await ctx.enqueueTask(setup.tasks.flaky, { n: 2 });
      assert(second.status === "enqueued");
      await waitUntil(async () => (await stateOf(setup, second.messageId)) === "failed", {
        what: "the second task to fail",
      });
      const discard = await setup.fedwork("failed", "discard", second.messageId);
      assertEquals([discard.code, discard.stdout], [0, `Discarded ${second.messageId}.\n`]);
      const empty = await setup.fedwork("failed");
      assertEquals([empty.code, empty.stdout], [0, "No failed tasks.\n"]);
      const twice = await setup.fedwork("failed", "discard", second.messageId);
      assertEquals(twice.code, 1);
    });
  });

  test(`on ${kind}, fedwork status lists a task's durable steps and the one it waits at`, async () => {
    await withFederation(kind, async (setup) => {
      const ctx = setup.federation.createContext(BASE, undefined);
      const enqueued = await ctx.enqueueTask(setup.tasks.waiting, {});
      assert(enqueued.status === "enqueued");
      await waitUntil(async () => {
        const steps = await setup.federation.getTaskSteps(enqueued.messageId);
        return steps.some((step) => step.id === "approval" && step.state === "waiting");
      }, { what: "the task to wait at its approval step" });
      const shown = await setup.fedwork("status", enqueued.messageId);
      assertEquals(shown.code, 0, shown.stderr);
      assertMatch(shown.stdout, /^steps: +2, at approval$/m);
      assertMatch(shown.stdout, /^ {2}done +run +prepare$/m);
      assertMatch(shown.stdout, /^ {2}waiting +wait +approval {2}until \S/m);
      const json = JSON.parse((await setup.fedwork("status", enqueued.messageId, "--json")).stdout);
      assertEquals(
        json.steps.map((step: { id: string; state: string }) => [step.id, step.state]),
        [["prepare", "done"], ["approval", "waiting"]],
      );
      await setup.federation.sendEvent("approved", { key: enqueued.messageId });
      await waitUntil(
        async () =>
          (await setup.federation.getTaskStatus(enqueued.messageId))?.state === "completed",
        { what: "the task to complete" },
      );
      await waitUntil(
        async () => (await setup.federation.getTaskSteps(enqueued.messageId)).length === 0,
        { what: "the ended task's step records to be deleted" },
      );
      const ended = await setup.fedwork("status", enqueued.messageId);
      assertEquals(/^steps:/m.test(ended.stdout), false, ended.stdout);
    });
  });

  test(`on ${kind}, fedwork cancel cancels a queued task and says when there is nothing to cancel`, async () => {
    await withFederation(kind, async (setup) => {
      const ctx = setup.federation.createContext(BASE, undefined);
      const later = await ctx.enqueueTask(setup.tasks.long, {}, { delay: { hours: 1 } });
      assert(later.status === "enqueued");
      const cancel = await setup.fedwork("cancel", later.messageId, "--reason", "not needed");
      assertEquals(cancel.code, 0, cancel.stderr);
      assertEquals(cancel.stdout, `Cancelled ${later.messageId} (it was queued).\n`);
      const status = await setup.federation.getTaskStatus(later.messageId);
      assertEquals([status?.state, status?.reason], ["cancelled", "not needed"]);
      const shown = await setup.fedwork("status", later.messageId);
      assertEquals(shown.code, 0, shown.stderr);
      assertMatch(shown.stdout, /^state: +cancelled$/m);
      const twice = await setup.fedwork("cancel", later.messageId);
      assertEquals([twice.code, twice.stderr], [
        1,
        `fedwork: task ${later.messageId} has ended already (cancelled).\n`,
      ]);
      const unknown = await setup.fedwork("cancel", "no-such-task", "--json");
      assertEquals(unknown.code, 1);
      assertEquals(JSON.parse(unknown.stdout), { status: "unknown", id: "no-such-task" });
    });
  });

  test(`on ${kind}, fedwork failed list --kind delivery shows a delivery refused for good, and replay sends it again`, async () => {
    let gone = true;
    await using server = await startTestServer(() =>
      new Response(gone ? "gone" : null, { status: gone ? 410 : 202 })
    );
    await withFederation(kind, async (setup) => {
      const inbox = new URL("/inbox", server.url);
      await setup.federation.createContext(BASE, undefined).sendActivity(
        { identifier: "alice" },
        { id: new URL("https://remote.example/users/carol"), inboxId: inbox },
        new Create({
          id: new URL("https://cli.example/activities/2"),
          actor: new URL("https://cli.example/users/alice"),
          object: new Note({ id: new URL("https://cli.example/notes/2"), content: "hi" }),
        }),
      );
      let id = "";
      await waitUntil(async () => {
        const page = await setup.federation.listFailedTasks({ kind: "delivery" });
        id = page.records[0]?.id ?? "";
        return id !== "";
      }, { what: "the delivery to fail for good", timeoutMs: 60_000 });
      const list = await setup.fedwork("failed", "list", "--kind", "delivery");
      assertEquals(list.code, 0, list.stderr);
      assertMatch(
        list.stdout,
        new RegExp(`^${id} +fedwork:delivery +delivery +permanent +1 .*HTTP 410 `, "m"),
      );
      const show = await setup.fedwork("failed", "show", id);
      assertEquals(show.code, 0, show.stderr);
      assertMatch(show.stdout, new RegExp(`^inbox: +${inbox.href.replaceAll(".", "\\.")}$`, "m"));
      assertMatch(show.stdout, /^activity: +Create https:\/\/cli\.example\/activities\/2$/m);
      const tasks = await setup.fedwork("failed", "list", "--kind", "task");
      assertEquals([tasks.code, tasks.stdout], [0, "No failed tasks.\n"]);

      const posts = () => server.requests.filter((request) => request.method === "POST").length;
      const before = posts();
      gone = false;
      const replay = await setup.fedwork("failed", "replay", id);
      assertEquals([replay.code, replay.stdout], [0, `Queued ${id} again.\n`], replay.stderr);
      await waitUntil(() => posts() > before, {
        what: "the replayed delivery to be sent",
        timeoutMs: 60_000,
      });
      const bad = await setup.fedwork("failed", "list", "--kind", "letter");
      assertEquals([bad.code, bad.stderr], [
        2,
        'fedwork: --kind must be one of task, delivery, inbox, fanout, not "letter".\n',
      ]);
    });
  });

  test(`on ${kind}, fedwork hosts lists an unhealthy host and hosts release sends its parked deliveries`, async () => {
    let down = true;
    await using server = await startTestServer(() =>
      down ? new Response("down", { status: 503 }) : new Response(null, { status: 202 })
    );
    const host = server.url.host;
    await withFederation(kind, async (setup) => {
      const ctx = setup.federation.createContext(BASE, undefined);
      await ctx.sendActivity(
        { identifier: "alice" },
        { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
        new Create({
          id: new URL("https://cli.example/activities/1"),
          actor: new URL("https://cli.example/users/alice"),
          object: new Note({ id: new URL("https://cli.example/notes/1"), content: "hello" }),
        }),
      );
      await waitUntil(
        async () => (await setup.federation.getHostHealth(host))?.parkedDeliveries === 1,
        { what: "the delivery to be parked", timeoutMs: 60_000 },
      );
      const hosts = await setup.fedwork("hosts");
      assertEquals(hosts.code, 0, hosts.stderr);
      assertMatch(hosts.stdout, /^HOST +STATE +FAILURES +PARKED +SINCE +NEXT PROBE$/m);
      assertMatch(
        hosts.stdout,
        new RegExp(`^${host.replaceAll(".", "\\.")} +unhealthy +1 +1 `, "m"),
      );
      const json = await setup.fedwork("hosts", "--json");
      assertEquals(JSON.parse(json.stdout).map((h: { host: string }) => h.host), [host]);

      down = false;
      const release = await setup.fedwork("hosts", "release", host);
      assertEquals([release.code, release.stdout], [0, `Released ${host}.\n`], release.stderr);
      await waitUntil(
        () => server.requests.some((request) => request.method === "POST") && !down,
        { what: "the parked delivery to be sent", timeoutMs: 60_000 },
      );
      await waitUntil(async () => (await setup.federation.listUnhealthyHosts()).length === 0, {
        what: "the host to be healthy",
      });
      const healthy = await setup.fedwork("hosts");
      assertEquals([healthy.code, healthy.stdout], [0, "No unhealthy hosts.\n"]);
      const twice = await setup.fedwork("hosts", "release", host);
      assertEquals([twice.code, twice.stderr], [
        1,
        `fedwork: host ${host} is not unhealthy or dead.\n`,
      ]);
    });
  });

  test(`on ${kind}, fedwork queues, workers, schedules and webhooks list what the federation has`, async () => {
    await withFederation(kind, async (setup) => {
      await setup.federation.scheduleTask(setup.tasks.flaky, { n: 3 }, {
        id: "hourly-flaky",
        every: { hours: 1 },
        baseUrl: BASE,
      });
      await setup.federation.addWebhook({
        url: "https://hooks.example/fedwork",
        events: ["completed"],
        tasks: ["nothing-runs-this"],
        secret: "a-secret-of-sixteen-characters-or-more",
      });
      await waitUntil(async () => (await setup.federation.listWorkers()).length > 0, {
        what: "the worker's heartbeat",
      });
      const queues = await setup.fedwork("queues", "--json");
      assertEquals(queues.code, 0, queues.stderr);
      const entries = JSON.parse(queues.stdout) as { role: string; depth: { queued: number } }[];
      assertEquals(entries.map((entry) => entry.role).sort(), [
        "fanout",
        "inbox",
        "outbox",
        "task",
      ]);
      assert(entries.every((entry) => typeof entry.depth?.queued === "number"), queues.stdout);
      const table = await setup.fedwork("queues");
      assertMatch(table.stdout, /^ROLE +QUEUE +QUEUED +READY +DELAYED +PAUSED$/m);
      // SQLite gives each role a table of its own; PostgreSQL's one queue
      // serves every role.
      const taskQueue = kind === "sqlite" ? "task" : "inbox\\+outbox\\+fanout\\+task";
      assertMatch(table.stdout, new RegExp(`^task +${taskQueue} +\\d+ +\\d+ +\\d+ +no$`, "m"));

      // A second worker on a machine of its own (it listens to nothing:
      // the first took every queue), registered all the same.
      const other = new AbortController();
      const second = setup.federation.startQueue(undefined, {
        signal: other.signal,
        machineId: "cli-machine-b",
      });
      try {
        await waitUntil(async () => (await setup.federation.listWorkers()).length === 2, {
          what: "the second worker's heartbeat",
        });
        const workers = await setup.fedwork("workers");
        assertEquals(workers.code, 0, workers.stderr);
        assertMatch(workers.stdout, /^MACHINE +ID +HOST +PID /m);
        assertMatch(workers.stdout, new RegExp(`^cli-machine-b +\\S+ +\\S+ +${process.pid} `, "m"));
        const host = hostname().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        assertMatch(workers.stdout, new RegExp(`^${host} +\\S+ +\\S+ +${process.pid} `, "m"));
        const listed = JSON.parse((await setup.fedwork("workers", "--json")).stdout) as {
          machineId: string;
        }[];
        assertEquals(
          listed.map((worker) => worker.machineId),
          [hostname(), "cli-machine-b"].sort(),
        );
      } finally {
        other.abort();
        await second;
      }

      const schedules = await setup.fedwork("schedules");
      assertEquals(schedules.code, 0, schedules.stderr);
      assertMatch(schedules.stdout, /^hourly-flaky +flaky +PT1H +- +\d{4}-/m);
      const webhooks = await setup.fedwork("webhooks", "--json");
      assertEquals(webhooks.code, 0, webhooks.stderr);
      assertEquals(JSON.parse(webhooks.stdout).map((w: { url: string }) => w.url), [
        "https://hooks.example/fedwork",
      ]);
    });
  });
}

// SQLite carries the updates and the cancel between processes with
// SqlitePubSub, PostgreSQL with PostgresPubSub.
for (const kind of ["sqlite", "postgres"] as const) {
  test(`on ${kind}, fedwork tail prints a running task's updates and exits after --count`, async () => {
    await withFederation(kind, async (setup) => {
      const tail = setup.start("tail", "--count", "2", "--json", "--task", "long");
      await within(tail.stderrLine("Watching task updates"), "tail to start", 60_000);
      const ctx = setup.federation.createContext(BASE, undefined);
      const long = await ctx.enqueueTask(setup.tasks.long, {});
      assert(long.status === "enqueued");
      try {
        const run = await within(tail.exited, "tail to print two updates and exit", 60_000);
        assertEquals(run.code, 0, run.stderr);
        const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
        assertEquals(lines.length, 2);
        for (const line of lines) assertEquals([line.id, line.name], [long.messageId, "long"]);
        assert(lines.some((line) => line.state === "running"), run.stdout);
        // Cancelling a running task reaches the worker here from the CLI.
        const cancel = await setup.fedwork("cancel", long.messageId);
        assertEquals(cancel.code, 0, cancel.stderr);
        assertEquals(cancel.stdout, `Cancelled ${long.messageId} (it was running).\n`);
        await waitUntil(async () => (await stateOf(setup, long.messageId)) === "cancelled", {
          what: "the running task to end cancelled",
        });
      } finally {
        tail.kill("SIGKILL");
        await setup.federation.cancelTask(long.messageId);
      }
    });
  });
}

test("on postgres, fedwork tail stops and exits 0 when the reader of its output goes", async () => {
  await withFederation("postgres", async (setup) => {
    const tail = setup.start("tail", "--task", "long");
    await within(tail.stderrLine("Watching task updates"), "tail to start", 60_000);
    const long = await setup.federation.createContext(BASE, undefined)
      .enqueueTask(setup.tasks.long, {});
    assert(long.status === "enqueued");
    try {
      await within(tail.stdoutLine(long.messageId), "tail to print an update", 60_000);
      // As `fedwork tail | head -n 1` does once it has its line; the task
      // keeps reporting progress, so tail writes again and finds no reader.
      await tail.closeStdout();
      const run = await within(tail.exited, "tail to exit once nobody reads it", 60_000);
      assertEquals([run.code, run.signal], [0, null], run.stderr);
    } finally {
      tail.kill("SIGKILL");
      await setup.federation.cancelTask(long.messageId);
    }
  });
});

test("on sqlite, fedwork tail stops on SIGINT and exits 0", async () => {
  await withFederation("sqlite", async (setup) => {
    const tail = setup.start("tail");
    await within(tail.stderrLine("Watching task updates"), "tail to start", 60_000);
    tail.kill("SIGINT");
    const run = await within(tail.exited, "tail to exit on SIGINT", 60_000);
    assertEquals([run.code, run.signal], [0, null], run.stderr);
  });
});
