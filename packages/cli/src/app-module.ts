// Loading the application's federation module: a file that exports the
// `Federation` (as `federation` or as the default export), or a function
// that returns it, or a promise of it.  Importing the module must not start
// the app's workers or web server; the CLI only calls the operator API.
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Federation } from "@fedwork/core";
import { CliFailure, CliUsageError } from "./errors.ts";

/**
 * The part of a `Federation` the CLI calls: any `Federation` of
 * `@fedwork/core` fits.
 * @since 0.4.0
 */
export type OperatorFederation = Pick<
  Federation<unknown>,
  | "getQueueDepths"
  | "listWorkers"
  | "listFailedTasks"
  | "getFailedTask"
  | "retryFailedTask"
  | "discardFailedTask"
  | "listCompletedTasks"
  | "cancelTask"
  | "getTaskStatus"
  | "getTaskSteps"
  | "listUnhealthyHosts"
  | "releaseHost"
  | "watchTasks"
  | "listSchedules"
  | "listWebhooks"
  | "pauseTask"
  | "resumeTask"
  | "pauseRole"
  | "resumeRole"
  | "listPaused"
>;

/** The methods a value must have to count as a federation. */
const REQUIRED_METHODS = [
  "getQueueDepths",
  "listWorkers",
  "listFailedTasks",
  "getFailedTask",
  "retryFailedTask",
  "discardFailedTask",
  "cancelTask",
  "watchTasks",
] as const;

/**
 * Imports the app's module and finds its federation: the export named
 * `federation`, else the default export; a function is called (without
 * arguments) and a promise awaited.
 * @param app The module's path, relative to `cwd`, or a `file:` URL.
 * @param cwd The directory relative paths start from.
 * @returns The federation.
 * @throws {CliUsageError} When there is no such file or it exports no
 *         federation.
 * @throws {CliFailure} When importing it or calling its function failed.
 */
export async function loadFederation(app: string, cwd: string): Promise<OperatorFederation> {
  const url = app.startsWith("file:")
    ? new URL(app)
    : pathToFileURL(isAbsolute(app) ? app : resolve(cwd, app));
  if (!existsSync(url)) throw new CliUsageError(`--app ${app}: no such file.`);
  let module: Record<string, unknown>;
  try {
    module = await import(url.href);
  } catch (error) {
    throw new CliFailure(`--app ${app}: importing the module failed: ${messageOf(error)}`);
  }
  const exported = "federation" in module ? module.federation : module.default;
  let value: unknown = exported;
  try {
    if (typeof value === "function") value = await value();
    else value = await value;
  } catch (error) {
    throw new CliFailure(`--app ${app}: making the federation failed: ${messageOf(error)}`);
  }
  const missing = REQUIRED_METHODS.filter((name) =>
    typeof (value as Record<string, unknown> | null)?.[name] !== "function"
  );
  if (value == null || typeof value !== "object" || missing.length > 0) {
    throw new CliUsageError(
      `--app ${app}: the module exports no federation; export it as \`federation\` or as the ` +
        "default export (or a function returning it)" +
        (exported === undefined ? "." : `, not ${describe(value)}.`),
    );
  }
  return value as OperatorFederation;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return `a ${typeof value}`;
  return "an object without the Federation's operator methods";
}

/**
 * An error's message, on one line.
 * @param error The error.
 * @returns Its message.
 */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s*\n\s*/g, " ");
}
