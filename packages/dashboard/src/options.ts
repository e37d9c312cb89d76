import { type DurationInput, durationToMilliseconds } from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";

const DASHBOARD_OPTION_NAMES: readonly string[] = [
  "authorize",
  "basePath",
  "title",
  "refreshInterval",
  "pageSize",
];

/**
 * Decides whether a request may see and operate the dashboard.  Only
 * `true` lets it through; anything else (or a throw) answers 403.
 * @param request The request, e.g. to check a session cookie.
 * @returns `true` to allow.
 * @since 0.2.0
 */
export type DashboardAuthorize = (request: Request) => boolean | Promise<boolean>;

/**
 * Options for {@link createDashboard}.
 * @since 0.2.0
 */
export interface DashboardOptions {
  /**
   * Called for every request, the page and its API alike; only `true`
   * lets it through.  Without it every request is refused (403): a
   * dashboard that replays and discards tasks is never open by default.
   */
  readonly authorize?: DashboardAuthorize;
  /**
   * The path the dashboard is mounted at, e.g. `"/admin/queues"`: the page
   * is served there and its API below.  `"/"` by default.  Requests for
   * other paths get 404.
   */
  readonly basePath?: string;
  /** The page's title; `"Fedwork dashboard"` by default. */
  readonly title?: string;
  /**
   * How often the page reloads queue depths, throughput, failed tasks and
   * hosts; 5 seconds by default, at least 1 second.
   */
  readonly refreshInterval?: DurationInput;
  /** How many failed tasks the page lists at a time; 50 by default (1–1000). */
  readonly pageSize?: number;
}

/** The options with their defaults, checked.  Internal. */
export interface ResolvedDashboardOptions {
  readonly authorize: DashboardAuthorize | undefined;
  /** `""` for the root, else starting with `/` and without a trailing `/`. */
  readonly basePath: string;
  readonly title: string;
  readonly refreshIntervalMs: number;
  readonly pageSize: number;
}

/**
 * Checks the options, throwing a `TypeError` or `RangeError` that names
 * the faulty option (an `UnknownOptionError`, with the nearest name, for
 * one it does not know).  Internal.
 * @param options The options.
 * @returns The options with defaults.
 */
export function resolveDashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  if (typeof options !== "object" || options == null) {
    throw new TypeError("createDashboard() needs an options object, e.g. { authorize }.");
  }
  assertKnownOptions(options, DASHBOARD_OPTION_NAMES, { where: "createDashboard()" });
  const { authorize } = options;
  if (authorize != null && typeof authorize !== "function") {
    throw new TypeError("The authorize option of createDashboard() must be a function.");
  }
  const basePath = options.basePath ?? "/";
  if (
    typeof basePath !== "string" || !basePath.startsWith("/") || /[?#\s\\]/.test(basePath) ||
    basePath.includes("//")
  ) {
    throw new TypeError(
      `The basePath option of createDashboard() must be a path starting with "/", ` +
        `such as "/admin/queues"; got ${JSON.stringify(basePath)}.`,
    );
  }
  const title = options.title ?? "Fedwork dashboard";
  if (typeof title !== "string" || title.trim() === "") {
    throw new TypeError("The title option of createDashboard() must be a non-empty string.");
  }
  const refreshIntervalMs = options.refreshInterval == null
    ? 5_000
    : durationToMilliseconds(options.refreshInterval, "refreshInterval");
  if (!(refreshIntervalMs >= 1_000)) {
    throw new RangeError(
      "The refreshInterval option of createDashboard() must be at least 1 second.",
    );
  }
  const pageSize = options.pageSize ?? 50;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    throw new RangeError(
      `The pageSize option of createDashboard() must be an integer from 1 to 1000; got ${
        String(pageSize)
      }.`,
    );
  }
  return {
    authorize,
    basePath: basePath.replace(/\/+$/, ""),
    title,
    refreshIntervalMs,
    pageSize,
  };
}
