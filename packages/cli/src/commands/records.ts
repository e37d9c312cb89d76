// `fedwork failed …` and `fedwork completed`: the failed-task store (tasks,
// deliveries, quarantined messages) with replay and discard, and the
// completed tasks when they are kept.
import { FailedTaskNotFoundError, type TaskRecordKind, type TaskRecordPage } from "@fedwork/core";
import {
  serializeFailedTask,
  serializeTaskRecord,
  type TaskRecordJson,
} from "@fedwork/dashboard/json";
import { messageOf } from "../app-module.ts";
import type { CommandContext, CommandSpec, OptionSpec } from "../command.ts";
import { CliFailure, CliUsageError, EXIT_OK } from "../errors.ts";
import { formatTime, orDash, renderTable } from "../table.ts";

const KINDS: readonly TaskRecordKind[] = ["task", "delivery", "inbox", "fanout"];

const LIST_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  task: { type: "string", value: "NAME", description: "only tasks of this name" },
  limit: { type: "integer", value: "N", description: "at most N records (50 by default)" },
  cursor: { type: "string", value: "CURSOR", description: "the page after the one that said so" },
};

/** `fedwork failed list`. */
export const failedListCommand: CommandSpec = {
  words: ["failed", "list"],
  summary: "list the tasks and deliveries that failed for good, newest first",
  options: {
    ...LIST_OPTIONS,
    kind: { type: "string", value: "KIND", description: "task, delivery, inbox or fanout" },
  },
  run: (context) =>
    listRecords(context, "failed", (options) => context.federation.listFailedTasks(options)),
};

/** `fedwork failed`: the same as `fedwork failed list`. */
export const failedCommand: CommandSpec = {
  ...failedListCommand,
  words: ["failed"],
  alias: true,
};

/** `fedwork completed`. */
export const completedCommand: CommandSpec = {
  words: ["completed"],
  summary: "list completed tasks, newest first (kept only with completedTaskRetention)",
  options: LIST_OPTIONS,
  run: (context) =>
    listRecords(context, "completed", (options) => context.federation.listCompletedTasks(options)),
};

async function listRecords(
  { options, json, print, note }: CommandContext,
  what: "failed" | "completed",
  list: (options: Record<string, unknown>) => Promise<TaskRecordPage>,
): Promise<number> {
  const kind = options.kind as string | undefined;
  if (kind != null && !(KINDS as readonly string[]).includes(kind)) {
    throw new CliUsageError(
      `--kind must be one of ${KINDS.join(", ")}, not ${JSON.stringify(kind)}.`,
    );
  }
  let page: TaskRecordPage;
  try {
    page = await list({
      ...(options.task == null ? {} : { taskName: options.task }),
      ...(kind == null ? {} : { kind }),
      ...(options.limit == null ? {} : { limit: options.limit }),
      ...(options.cursor == null ? {} : { cursor: options.cursor }),
    });
  } catch (error) {
    // A malformed cursor or a limit past 1000.
    if (error instanceof TypeError || error instanceof RangeError) {
      throw new CliUsageError(messageOf(error));
    }
    throw error;
  }
  const records = page.records.map(serializeTaskRecord);
  if (json) {
    await print(JSON.stringify({ records, cursor: page.cursor ?? null }));
    return EXIT_OK;
  }
  if (records.length === 0) {
    await print(what === "failed" ? "No failed tasks." : "No completed tasks.");
    return EXIT_OK;
  }
  const header = what === "failed"
    ? ["ID", "TASK", "KIND", "REASON", "ATTEMPTS", "FINISHED", "ERROR"]
    : ["ID", "TASK", "ATTEMPTS", "FINISHED"];
  await print(renderTable(
    header,
    records.map((record) =>
      what === "failed"
        ? [
          record.id,
          record.taskName,
          record.kind,
          orDash(record.reason),
          String(record.attempts),
          formatTime(record.finishedAt),
          errorLine(record),
        ]
        : [record.id, record.taskName, String(record.attempts), formatTime(record.finishedAt)]
    ),
  ));
  if (page.cursor != null) await note(`More: add --cursor ${page.cursor}`);
  return EXIT_OK;
}

function errorLine(record: TaskRecordJson): string {
  const status = record.delivery?.statusCode;
  const error = record.error == null ? "-" : `${record.error.name}: ${record.error.message}`;
  return status == null ? error : `HTTP ${status} ${error}`;
}

/** `fedwork failed show <id>`. */
export const failedShowCommand: CommandSpec = {
  words: ["failed", "show"],
  summary: "show one failed task: its error, stack and payload",
  arguments: ["id"],
  async run({ federation, args, json, print }) {
    const details = await federation.getFailedTask(args.id);
    if (details == null) throw new CliFailure(`no failed task ${JSON.stringify(args.id)}.`);
    const task = await serializeFailedTask(details);
    if (json) {
      await print(JSON.stringify(task));
      return EXIT_OK;
    }
    const lines = [
      `id:          ${task.id}`,
      `task:        ${task.taskName}`,
      `kind:        ${task.kind}`,
      `reason:      ${orDash(task.reason)}`,
      `attempts:    ${task.attempts}`,
      `enqueued:    ${formatTime(task.enqueuedAt)}`,
      `finished:    ${formatTime(task.finishedAt)}`,
    ];
    if (task.orderingKey != null) lines.push(`ordering:    ${task.orderingKey}`);
    if (task.delivery != null) {
      lines.push(`inbox:       ${task.delivery.inbox}`);
      lines.push(`activity:    ${task.delivery.activityType} ${orDash(task.delivery.activityId)}`);
      lines.push(`status:      ${orDash(task.delivery.statusCode)}`);
    }
    if (task.message != null) {
      lines.push(
        `activity:    ${orDash(task.message.activityType)} ${orDash(task.message.activityId)}`,
      );
    }
    lines.push(
      `error:       ${task.error == null ? "-" : `${task.error.name}: ${task.error.message}`}`,
    );
    if (task.stack != null) lines.push("stack:", indent(task.stack));
    lines.push(
      task.payload == null ? `payload:     not decoded: ${task.payloadError}` : "payload:",
    );
    if (task.payload != null) lines.push(indent(task.payload));
    await print(lines.join("\n"));
    return EXIT_OK;
  },
};

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}

/** `fedwork failed replay <id>`. */
export const failedReplayCommand: CommandSpec = {
  words: ["failed", "replay"],
  summary: "enqueue a failed task or delivery again (as attempt 0, same id)",
  details: "The record is removed once the task is queued again; a new failure records it\n" +
    "again.  Fails when the task is no longer defined, its payload fails the task's\n" +
    "current schema, or a delivery's host is declared dead (release it first).",
  arguments: ["id"],
  async run({ federation, args, json, print }) {
    try {
      const result = await federation.retryFailedTask(args.id);
      await print(
        json ? JSON.stringify({ id: args.id, status: result.status }) : `Queued ${args.id} again.`,
      );
      return EXIT_OK;
    } catch (error) {
      if (error instanceof FailedTaskNotFoundError) {
        throw new CliFailure(`no failed task ${JSON.stringify(args.id)}.`);
      }
      throw new CliFailure(`could not replay ${args.id}: ${messageOf(error)}`);
    }
  },
};

/** `fedwork failed discard <id>`. */
export const failedDiscardCommand: CommandSpec = {
  words: ["failed", "discard"],
  summary: "remove a failed task's record without running it",
  arguments: ["id"],
  async run({ federation, args, json, print }) {
    const discarded = await federation.discardFailedTask(args.id);
    if (!discarded) throw new CliFailure(`no failed task ${JSON.stringify(args.id)}.`);
    await print(json ? JSON.stringify({ id: args.id, discarded }) : `Discarded ${args.id}.`);
    return EXIT_OK;
  },
};
