/**
 * `@fedwork/cli`: the `fedwork` operator command line.  It loads the app's
 * federation module (`--app ./src/federation.ts` or `FEDWORK_APP`) and
 * calls the federation's operator API: queue depths, workers, failed tasks
 * and deliveries (list, show, replay, discard), completed tasks, task
 * status and cancellation, unhealthy hosts and their release, schedules,
 * webhooks, and live task updates (`tail`).  Tables by default, `--json`
 * for scripts; exit code 0 done, 1 not found or failed, 2 malformed command
 * line.
 *
 * ```sh
 * npx fedwork --app ./src/federation.ts failed list
 * npx fedwork --app ./src/federation.ts failed replay 0193…
 * ```
 * @module
 * @since 0.4.0
 */
export { runCli, type RunCliOptions } from "./cli.ts";
export type { OperatorFederation } from "./app-module.ts";
