// `fedwork pause`, `fedwork resume` and `fedwork paused`: holding a task or
// a role's queued work in every process, and letting it go again.
import { QUEUE_ROLES, type QueueRole } from "@fedwork/core";
import type { CommandContext, CommandSpec } from "../command.ts";
import { CliUsageError, EXIT_OK } from "../errors.ts";

const ROLES: readonly QueueRole[] = QUEUE_ROLES;

/** The task name or the role a pause or resume command was given, checked. */
function targetOf(
  { args, options }: CommandContext,
  verb: string,
): { task: string } | { role: QueueRole } {
  const role = options.role as string | undefined;
  const task = args.task;
  if ((role == null) === (task == null)) {
    throw new CliUsageError(`give a task name or --role ROLE (not both): fedwork ${verb} <task>.`);
  }
  if (role != null) {
    if (!ROLES.includes(role as QueueRole)) {
      throw new CliUsageError(`--role must be one of ${ROLES.join(", ")}; got ${role}.`);
    }
    return { role: role as QueueRole };
  }
  return { task: task! };
}

const roleOption = {
  role: {
    type: "string",
    value: "ROLE",
    description: `a role instead of a task: ${ROLES.join(", ")}`,
  },
} as const;

/** `fedwork pause <task>` and `fedwork pause --role ROLE`. */
export const pauseCommand: CommandSpec = {
  words: ["pause"],
  summary: "pause a task or a role in every process",
  details: "Its queued messages stay in their queue and no worker runs them until `fedwork\n" +
    "resume`; runs already started finish.  Kept in the key–value store: it holds\n" +
    "across restarts, and every worker sees it at once over the federation's pubsub\n" +
    "(within 5 seconds without one).",
  optionalArguments: ["task"],
  options: roleOption,
  async run(context) {
    const target = targetOf(context, "pause");
    if ("role" in target) await context.federation.pauseRole(target.role);
    else await context.federation.pauseTask(target.task);
    return await report(context, "Paused", target);
  },
};

/** `fedwork resume <task>` and `fedwork resume --role ROLE`. */
export const resumeCommand: CommandSpec = {
  words: ["resume"],
  summary: "resume a paused task or role",
  details: "Workers take its held messages as each comes due again (within 5 seconds).",
  optionalArguments: ["task"],
  options: roleOption,
  async run(context) {
    const target = targetOf(context, "resume");
    if ("role" in target) await context.federation.resumeRole(target.role);
    else await context.federation.resumeTask(target.task);
    return await report(context, "Resumed", target);
  },
};

/** `fedwork paused`. */
export const pausedCommand: CommandSpec = {
  words: ["paused"],
  summary: "list the paused tasks and roles",
  async run({ federation, json, print }) {
    const paused = await federation.listPaused();
    if (json) await print(JSON.stringify(paused));
    else await print(pausedText(paused));
    return EXIT_OK;
  },
};

/**
 * The paused tasks and roles in words, for `paused` and `queues`.
 * @param paused What is paused.
 * @returns One line each for tasks and roles, or "Nothing is paused.".
 */
export function pausedText(paused: { tasks: readonly string[]; roles: readonly string[] }): string {
  if (paused.tasks.length === 0 && paused.roles.length === 0) return "Nothing is paused.";
  const lines: string[] = [];
  if (paused.roles.length > 0) lines.push(`Paused roles: ${paused.roles.join(", ")}`);
  if (paused.tasks.length > 0) lines.push(`Paused tasks: ${paused.tasks.join(", ")}`);
  return lines.join("\n");
}

async function report(
  { federation, json, print }: CommandContext,
  verb: string,
  target: { task: string } | { role: QueueRole },
): Promise<number> {
  if (json) await print(JSON.stringify(await federation.listPaused()));
  else {
    await print(
      "role" in target ? `${verb} the ${target.role} role.` : `${verb} task ${target.task}.`,
    );
  }
  return EXIT_OK;
}
