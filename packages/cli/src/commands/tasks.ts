// `fedwork cancel <taskId>` and `fedwork status <taskId>`: one task, by the
// id enqueueTask() returned.
import type { TaskStatus } from "@fedwork/core";
import { toDisplayText } from "@fedwork/dashboard/json";
import type { CommandSpec } from "../command.ts";
import { CliFailure, EXIT_OK } from "../errors.ts";
import { formatTime, orDash } from "../table.ts";

/** `fedwork cancel <taskId>`. */
export const cancelCommand: CommandSpec = {
  words: ["cancel"],
  summary: "cancel a queued or running task",
  details: "A queued, delayed or retrying task is marked so that no worker runs it; a running\n" +
    "one has its ctx.task.signal aborted in the process that runs it (over the\n" +
    "federation's pubsub).  Fails (exit 1) when the task has ended or is unknown.",
  arguments: ["taskId"],
  options: {
    reason: { type: "string", value: "TEXT", description: "why, kept in the task's status" },
  },
  async run({ federation, args, options, json, print }) {
    const reason = options.reason as string | undefined;
    const result = await federation.cancelTask(args.taskId, reason == null ? {} : { reason });
    if (json) await print(JSON.stringify(result));
    if (result.status === "unknown") {
      throw new CliFailure(`no task ${JSON.stringify(args.taskId)} (or its status expired).`);
    }
    if (result.status === "finished") {
      throw new CliFailure(`task ${args.taskId} has ended already (${result.state}).`);
    }
    if (!json) await print(`Cancelled ${args.taskId} (it was ${result.state}).`);
    return EXIT_OK;
  },
};

/** `fedwork status <taskId>`. */
export const statusCommand: CommandSpec = {
  words: ["status"],
  summary: "show a task's status: state, attempt, progress, error",
  arguments: ["taskId"],
  async run({ federation, args, json, print }) {
    const status = await federation.getTaskStatus(args.taskId);
    if (status == null) {
      throw new CliFailure(`no task ${JSON.stringify(args.taskId)} (or its status expired).`);
    }
    await print(json ? await statusJson(status) : await statusText(status));
    return EXIT_OK;
  },
};

async function statusJson(status: TaskStatus): Promise<string> {
  // Through the display conversion: results and progress data may hold
  // values JSON cannot (big integers, maps, vocabulary objects).
  return await toDisplayText(status, 0);
}

async function statusText(status: TaskStatus): Promise<string> {
  const lines = [
    `id:          ${status.id}`,
    `task:        ${status.name}`,
    `state:       ${status.state}`,
    `attempt:     ${status.attempt}`,
    `updated:     ${formatTime(status.updatedAt.toISOString())}`,
    `progress:    ${
      orDash(status.progress?.percent == null ? null : `${status.progress.percent}%`)
    }`,
  ];
  if (status.progress?.data !== undefined) {
    lines.push(`data:        ${await toDisplayText(status.progress.data, 0)}`);
  }
  if (status.error != null) {
    lines.push(`error:       ${status.error.name}: ${status.error.message}`);
  }
  if (status.reason != null) lines.push(`reason:      ${status.reason}`);
  if (status.result !== undefined) {
    lines.push(`result:      ${await toDisplayText(status.result, 0)}`);
  }
  return lines.join("\n");
}
