// `fedwork tail`: every task's changes of state and progress reports, live,
// until Ctrl-C (or --count updates).
import { serializeTaskUpdate, type TaskUpdateJson } from "@fedwork/dashboard/json";
import type { CommandSpec } from "../command.ts";
import { EXIT_OK } from "../errors.ts";
import { formatTime } from "../table.ts";

/** `fedwork tail`. */
export const tailCommand: CommandSpec = {
  words: ["tail"],
  summary: "print task updates (state changes, progress) live until Ctrl-C",
  details: "Reads federation.watchTasks(): updates reach it from other processes through\n" +
    "the federation's pubsub (PostgresPubSub, RedisPubSub); with the default in-process\n" +
    "pubsub only this process's updates would arrive, so none do.  With --json, one\n" +
    "JSON object per line.",
  options: {
    count: { type: "integer", value: "N", description: "stop after N updates" },
    task: { type: "string", value: "NAME", description: "only updates of tasks of this name" },
  },
  async run({ federation, options, json, print, note, signal }) {
    const count = options.count as number | undefined;
    const taskName = options.task as string | undefined;
    const controller = new AbortController();
    const stop = () => controller.abort();
    signal.addEventListener("abort", stop, { once: true });
    let printed = 0;
    try {
      const updates = federation.watchTasks({ signal: controller.signal });
      await note("Watching task updates; Ctrl-C stops.");
      for await (const update of updates) {
        if (taskName != null && update.status.name !== taskName) continue;
        const line = await serializeTaskUpdate(update);
        await print(json ? JSON.stringify(line) : updateLine(line));
        if (count != null && ++printed >= count) break;
      }
    } finally {
      signal.removeEventListener("abort", stop);
      controller.abort();
    }
    return EXIT_OK;
  },
};

function updateLine(update: TaskUpdateJson): string {
  const parts = [
    formatTime(update.updatedAt),
    update.id,
    update.name,
    update.state,
    `attempt ${update.attempt ?? "-"}`,
  ];
  if (update.machineId != null) parts.push(`on ${update.machineId}`);
  if (update.percent != null) parts.push(`${update.percent}%`);
  if (update.data != null) parts.push(update.data);
  if (update.error != null) parts.push(update.error);
  return parts.join("  ");
}
