// `fedwork cancel <taskId>` and `fedwork status <taskId>`: one task, by the
// id enqueueTask() returned.
import type { TaskStatus, TaskStepInfo } from "@fedwork/core";
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
  summary: "show a task's status: state, attempt, progress, error, durable steps",
  details: "A task made of durable steps (ctx.step) also lists its steps until it ends:\n" +
    "those recorded and the one it sleeps or waits at.",
  arguments: ["taskId"],
  async run({ federation, args, json, print }) {
    const status = await federation.getTaskStatus(args.taskId);
    if (status == null) {
      throw new CliFailure(`no task ${JSON.stringify(args.taskId)} (or its status expired).`);
    }
    // A federation older than 0.4.0 has no steps to tell.
    const steps = typeof federation.getTaskSteps === "function"
      ? await federation.getTaskSteps(args.taskId)
      : [];
    await print(json ? await statusJson(status, steps) : await statusText(status, steps));
    return EXIT_OK;
  },
};

async function statusJson(status: TaskStatus, steps: TaskStepInfo[]): Promise<string> {
  // Through the display conversion: results and progress data may hold
  // values JSON cannot (big integers, maps, vocabulary objects).
  return await toDisplayText(steps.length < 1 ? status : { ...status, steps }, 0);
}

function stepsText(steps: TaskStepInfo[]): string[] {
  if (steps.length < 1) return [];
  const current = steps.find((step) => step.state !== "done");
  const lines = [`steps:       ${steps.length}${current == null ? "" : `, at ${current.id}`}`];
  for (const step of steps) {
    const until = step.until == null ? "" : `  until ${formatTime(step.until.toISOString())}`;
    const failures = step.failures == null ? "" : `  failed ${step.failures}x`;
    lines.push(`  ${step.state.padEnd(9)}${step.kind.padEnd(9)}${step.id}${until}${failures}`);
  }
  return lines;
}

async function statusText(status: TaskStatus, steps: TaskStepInfo[]): Promise<string> {
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
  lines.push(...stepsText(steps));
  return lines.join("\n");
}
