/**
 * `@fedwork/dashboard`: an operator's dashboard for a Fedwork federation,
 * as one Fetch API handler serving one self-contained web page and its
 * JSON API: queue depths, throughput and failures over the last hour,
 * failed tasks with replay and discard, live task progress and unhealthy
 * remote hosts, and the running workers.
 * @module
 * @since 0.2.0
 */
export { createDashboard, DASHBOARD_CSRF_HEADER, type DashboardHandler } from "./dashboard.ts";
export type { DashboardAuthorize, DashboardOptions } from "./options.ts";
export type {
  DashboardFederation,
  DashboardHostHealth,
  DashboardRole,
  DashboardTaskStep,
  DashboardTaskUpdate,
  DashboardWorker,
} from "./source.ts";
