// Machine ids: the option's checks on createFederation() and startQueue(),
// the host name default, the records of older workers, and the grouping.
// Two worker processes on real engines: @fedwork/testing's
// testWorkerMachines(), which SQLite and Redis run.
import { hostname } from "node:os";
import {
  assert,
  assertEquals,
  assertRejects,
  assertThrows,
  test,
  waitUntil,
} from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../../federation/federation.ts";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { decodeTaskUpdate } from "../status/store.ts";
import { groupWorkersByMachine } from "./machines.ts";
import { MAX_MACHINE_ID_LENGTH } from "./machine-id.ts";
import type { WorkerInfo } from "./types.ts";

const invalid: [unknown, RegExp][] = [
  ["", /non-empty string/],
  ["   ", /non-empty string/],
  [42, /non-empty string.*a number/],
  ["a".repeat(MAX_MACHINE_ID_LENGTH + 1), /257 characters long; at most 256/],
  ["web\n1", /control characters/],
];

test("createFederation() refuses an invalid machineId, naming the option", () => {
  for (const [machineId, message] of invalid) {
    const error = assertThrows(
      () => createFederation<void>({ kv: new MemoryKvStore(), machineId: machineId as string }),
      FederationOptionError,
    );
    assertEquals(error.option, "machineId");
    assert(/machineId option of createFederation\(\)/.test(error.message), error.message);
    assert(message.test(error.message), error.message);
  }
  // The longest one is fine.
  createFederation<void>({ kv: new MemoryKvStore(), machineId: "a".repeat(256) });
});

test("startQueue() refuses an invalid machineId before it starts a worker", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  for (const [machineId, message] of invalid) {
    const error = await assertRejects(
      () => federation.startQueue(undefined, { machineId: machineId as string }),
      TypeError,
    );
    assert(/machineId option of startQueue\(\)/.test(error.message), error.message);
    assert(message.test(error.message), error.message);
  }
  assertEquals(await federation.listWorkers(), []);
});

test("a worker's machine is startQueue()'s machineId, else the federation's, else the host name", async () => {
  await using queue = new InProcessMessageQueue();
  await using plainQueue = new InProcessMessageQueue();
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    machineId: "pod-7",
  });
  const plain = createFederation<void>({ kv, queue: plainQueue, manuallyStartQueue: true });
  const ran: { id: string; machine: string | undefined }[] = [];
  const job = federation.defineTask("job", {
    schema: z.object({ n: z.number() }),
    handler: (ctx) => void ran.push({ id: ctx.task.id, machine: undefined }),
  });
  const controller = new AbortController();
  const running = [
    federation.startQueue(undefined, { signal: controller.signal }),
    // Listens to nothing (the queue is taken) but is registered.
    federation.startQueue(undefined, { signal: controller.signal, machineId: "pod-8" }),
    plain.startQueue(undefined, { signal: controller.signal }),
  ];
  try {
    await waitUntil(async () => (await federation.listWorkers()).length === 3, {
      what: "three workers to register",
    });
    const machines = (await federation.listWorkers()).map((worker) => worker.machineId).sort();
    assertEquals(machines, [hostname(), "pod-7", "pod-8"].sort());
    const result = await federation.createContext(new URL("https://m.example/"), undefined)
      .enqueueTask(job, { n: 1 });
    assert(result.status === "enqueued");
    await waitUntil(
      async () => (await federation.getTaskStatus(result.messageId))?.state === "completed",
      {
        what: "the task to complete",
      },
    );
    const status = await federation.getTaskStatus(result.messageId);
    const pod7 = (await federation.listWorkers()).find((worker) => worker.machineId === "pod-7");
    assertEquals([status?.workerId, status?.machineId], [pod7?.id, "pod-7"]);
    assertEquals(ran.length, 1);
  } finally {
    controller.abort();
    await Promise.all(running);
  }
});

test("a worker record written before 0.4.0 is listed with its host as its machine", async () => {
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({ kv, manuallyStartQueue: true });
  const now = Date.now();
  await kv.set(["fedwork", "worker", "old"], {
    id: "old",
    host: "legacy-host",
    pid: 12,
    runtime: "Node.js/22",
    queues: [],
    capabilities: [],
    startedAt: now,
    lastHeartbeatAt: now,
    heartbeatIntervalMs: 15_000,
    offlineAfterMs: 45_000,
    stopping: false,
    running: [],
    counts: { completed: 0, retried: 0, failed: 0, dropped: 0, cancelled: 0 },
  });
  const [worker] = await federation.listWorkers();
  assertEquals([worker?.id, worker?.machineId], ["old", "legacy-host"]);
});

test("task updates without a worker (older Fedwork) still decode, and ids travel in pairs", () => {
  const base = {
    id: "t1",
    kind: "state",
    status: {
      id: "t1",
      name: "job",
      state: "completed",
      attempt: 0,
      updatedAt: new Date(0).toISOString(),
    },
  };
  const old = decodeTaskUpdate(JSON.stringify(base));
  assertEquals([old?.status.state, old?.status.workerId, old?.status.machineId], [
    "completed",
    undefined,
    undefined,
  ]);
  const both = decodeTaskUpdate(JSON.stringify({
    ...base,
    status: { ...base.status, workerId: "w", machineId: "m" },
  }));
  assertEquals([both?.status.workerId, both?.status.machineId], ["w", "m"]);
  const half = decodeTaskUpdate(JSON.stringify({
    ...base,
    status: { ...base.status, workerId: "w", machineId: 5 },
  }));
  assertEquals([half?.status.state, half?.status.workerId], ["completed", undefined]);
});

test("groupWorkersByMachine() groups by machine id, in order, with a count per state", () => {
  const worker = (id: string, machineId: string, state: WorkerInfo["state"]) =>
    ({ id, machineId, state }) as WorkerInfo;
  const machines = groupWorkersByMachine([
    worker("1", "b", "busy"),
    worker("2", "a", "idle"),
    worker("3", "b", "offline"),
    worker("4", "b", "busy"),
  ]);
  assertEquals(machines.map((machine) => machine.machineId), ["a", "b"]);
  assertEquals(machines[1].workers.map((w) => w.id), ["1", "3", "4"]);
  assertEquals(machines[1].states, { busy: 2, idle: 0, stopping: 0, offline: 1 });
  assertEquals(machines[0].states, { busy: 0, idle: 1, stopping: 0, offline: 0 });
  assertEquals(groupWorkersByMachine([]), []);
});
