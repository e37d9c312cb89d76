// Every command of the CLI, in the order `fedwork --help` lists them.
import type { CommandSpec } from "../command.ts";
import { queuesCommand, workersCommand } from "./queues.ts";
import {
  completedCommand,
  failedCommand,
  failedDiscardCommand,
  failedListCommand,
  failedReplayCommand,
  failedShowCommand,
} from "./records.ts";
import { cancelCommand, statusCommand } from "./tasks.ts";
import { hostsCommand, hostsListCommand, hostsReleaseCommand } from "./hosts.ts";
import { tailCommand } from "./tail.ts";
import { pauseCommand, pausedCommand, resumeCommand } from "./pauses.ts";
import { schedulesCommand, webhooksCommand } from "./listings.ts";

/** The commands. */
export const COMMANDS: readonly CommandSpec[] = [
  queuesCommand,
  workersCommand,
  failedCommand,
  failedListCommand,
  failedShowCommand,
  failedReplayCommand,
  failedDiscardCommand,
  completedCommand,
  statusCommand,
  cancelCommand,
  pauseCommand,
  resumeCommand,
  pausedCommand,
  hostsCommand,
  hostsListCommand,
  hostsReleaseCommand,
  tailCommand,
  schedulesCommand,
  webhooksCommand,
];
