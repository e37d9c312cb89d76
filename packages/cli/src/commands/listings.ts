// `fedwork schedules` and `fedwork webhooks`: what is set up to run or to
// be told.
import type { CommandSpec } from "../command.ts";
import { EXIT_OK } from "../errors.ts";
import { formatTime, orDash, renderTable } from "../table.ts";

/** `fedwork schedules`. */
export const schedulesCommand: CommandSpec = {
  words: ["schedules"],
  summary: "list the recurring tasks (scheduleTask())",
  async run({ federation, json, print }) {
    const schedules = (await federation.listSchedules()).map((schedule) => ({
      id: schedule.id,
      taskName: schedule.taskName,
      every: schedule.every?.toString() ?? null,
      cron: schedule.cron ?? null,
      timezone: schedule.timezone ?? null,
      createdAt: schedule.createdAt.toISOString(),
      lastRunAt: schedule.lastRunAt?.toISOString() ?? null,
      nextRunAt: schedule.nextRunAt?.toISOString() ?? null,
    }));
    if (json) {
      await print(JSON.stringify(schedules));
      return EXIT_OK;
    }
    if (schedules.length === 0) {
      await print("No schedules.");
      return EXIT_OK;
    }
    await print(renderTable(
      ["ID", "TASK", "WHEN", "LAST RUN", "NEXT RUN"],
      schedules.map((schedule) => [
        schedule.id,
        schedule.taskName,
        schedule.every ??
          `${schedule.cron}${schedule.timezone == null ? "" : ` ${schedule.timezone}`}`,
        formatTime(schedule.lastRunAt),
        formatTime(schedule.nextRunAt),
      ]),
    ));
    return EXIT_OK;
  },
};

/** `fedwork webhooks`. */
export const webhooksCommand: CommandSpec = {
  words: ["webhooks"],
  summary: "list the webhooks (without their secrets)",
  async run({ federation, json, print }) {
    const webhooks = await federation.listWebhooks();
    if (json) {
      await print(JSON.stringify(webhooks));
      return EXIT_OK;
    }
    if (webhooks.length === 0) {
      await print("No webhooks.");
      return EXIT_OK;
    }
    await print(renderTable(
      ["ID", "URL", "EVENTS", "ENABLED", "FAILURES", "LAST ERROR"],
      webhooks.map((webhook) => [
        webhook.id,
        webhook.url,
        webhook.events.join(","),
        webhook.enabled ? "yes" : `no (since ${formatTime(webhook.disabledAt?.toISOString())})`,
        String(webhook.consecutiveFailures),
        orDash(webhook.lastError),
      ]),
    ));
    return EXIT_OK;
  },
};
