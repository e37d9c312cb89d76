// `fedwork queues` and `fedwork workers`: what waits in each queue, and who
// takes it out.
import { serializeQueueDepth, serializeWorker } from "@fedwork/dashboard/json";
import type { CommandSpec } from "../command.ts";
import { EXIT_OK } from "../errors.ts";
import { formatTime, orDash, renderTable } from "../table.ts";

/** `fedwork queues`. */
export const queuesCommand: CommandSpec = {
  words: ["queues"],
  summary: "show how many messages each queue holds",
  details: "One row per role's queue: queued (everything not yet acknowledged), ready (what a\n" +
    "worker could take now) and delayed.  `-` when the queue cannot tell.  PAUSED says\n" +
    "whether the role is paused (fedwork pause --role); paused tasks are listed below.",
  async run({ federation, json, print }) {
    const [depths, paused] = await Promise.all([
      federation.getQueueDepths(),
      // A federation of an older @fedwork/core has nothing paused.
      typeof federation.listPaused === "function"
        ? federation.listPaused()
        : { tasks: [] as readonly string[], roles: [] as readonly string[] },
    ]);
    const entries = depths.map((entry) => ({
      ...serializeQueueDepth(entry),
      paused: (paused.roles as readonly string[]).includes(entry.role),
    }));
    if (json) {
      await print(JSON.stringify(entries));
      return EXIT_OK;
    }
    if (entries.length === 0) {
      await print("No queues (the federation has no queue).");
      return EXIT_OK;
    }
    await print(renderTable(
      ["ROLE", "QUEUE", "QUEUED", "READY", "DELAYED", "PAUSED"],
      entries.map(({ role, queue, depth, paused }) => [
        role,
        queue,
        orDash(depth?.queued),
        orDash(depth?.ready),
        orDash(depth?.delayed),
        paused ? "yes" : "no",
      ]),
    ));
    if (paused.tasks.length > 0) await print(`Paused tasks: ${paused.tasks.join(", ")}`);
    return EXIT_OK;
  },
};

/** `fedwork workers`. */
export const workersCommand: CommandSpec = {
  words: ["workers"],
  summary: "list the worker processes and what they run",
  details: "The workers every process started with startQueue(), by machine (the machineId\n" +
    "option, else the host name) and oldest first on each, with their state (busy,\n" +
    "idle, stopping, or offline after missing heartbeats), queues (roles × concurrency),\n" +
    "the tasks they run and their counts.",
  async run({ federation, json, print }) {
    // Sorting is stable: each machine's workers stay oldest first.
    const workers = (await federation.listWorkers()).map(serializeWorker)
      .sort((a, b) => (a.machineId < b.machineId ? -1 : a.machineId > b.machineId ? 1 : 0));
    if (json) {
      await print(JSON.stringify(workers));
      return EXIT_OK;
    }
    if (workers.length === 0) {
      await print("No workers.");
      return EXIT_OK;
    }
    await print(renderTable(
      [
        "MACHINE",
        "ID",
        "HOST",
        "PID",
        "RUNTIME",
        "STATE",
        "QUEUES",
        "RUNNING",
        "DONE",
        "FAILED",
        "HEARTBEAT",
      ],
      workers.map((worker) => [
        worker.machineId,
        worker.id,
        worker.host,
        String(worker.pid),
        worker.runtime,
        worker.state,
        worker.queues.join(", "),
        String(worker.currentTaskIds.length),
        String(worker.completed),
        String(worker.failed),
        formatTime(worker.lastHeartbeatAt),
      ]),
    ));
    return EXIT_OK;
  },
};
