import {
  DeadHostError,
  FailedTaskNotFoundError,
  TaskNotDefinedError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import { type DashboardOptions, resolveDashboardOptions } from "./options.ts";
import { renderPage } from "./page.ts";
import {
  serializeFailedTask,
  serializeHostHealth,
  serializeQueueDepth,
  serializeTaskRecord,
  serializeWorker,
} from "./serialize.ts";
import type { DashboardFederation } from "./source.ts";
import { canPause, matchPauseRequest, runPauseRequest } from "./pauses.ts";
import { canShowSteps, matchStepsRequest, taskStepsBody } from "./steps.ts";
import { streamTaskUpdates } from "./stream.ts";

const logger = getLogger(["fedwork", "dashboard"]);

/**
 * The header every state-changing request (replay, discard) must carry:
 * HTML forms cannot send it, and a cross-origin script cannot without a
 * CORS preflight the dashboard never grants, so another site cannot make
 * an operator's browser replay or discard tasks.
 * @since 0.2.0
 */
export const DASHBOARD_CSRF_HEADER = "X-Fedwork-Dashboard";

/**
 * A Fetch API handler serving the dashboard.
 * @since 0.2.0
 */
export type DashboardHandler = (request: Request) => Promise<Response>;

/**
 * Creates the operator's dashboard of a federation: one web page (HTML,
 * CSS and JavaScript of its own, no external resources) and its JSON API,
 * served by a Fetch API handler under `basePath`.  The page shows queue
 * depths per role and queue, throughput and failures per minute over the
 * last hour, failed tasks with their payload and error (with Replay and
 * Discard buttons; failed deliveries among them, with their inbox and last
 * status), live task progress (when the federation has `watchTasks()`)
 * and unhealthy and dead remote hosts (when it has `listUnhealthyHosts()`),
 * with a Release button (when it has `releaseHost()`), and a Cancel
 * button on each live task that has not ended (when it has `cancelTask()`).
 *
 * Every request goes through `authorize`, which must return `true`;
 * without it, every request is refused with 403.  Replay and discard are
 * POST requests that must carry the {@link DASHBOARD_CSRF_HEADER} header
 * and, when the browser tells, come from the same origin.
 *
 * Routes under `basePath`: `GET /` (the page), `GET /api/overview`,
 * `GET /api/failed?cursor=&task=`, `GET /api/failed/:id`,
 * `POST /api/failed/:id/replay`, `POST /api/failed/:id/discard`,
 * `POST /api/hosts/:host/release`, `POST /api/tasks/:id/cancel`,
 * `POST /api/paused/task/:name/pause` (and `/resume`, and `role/:role/…`
 * for a role; since 0.4.0, when the federation has the pause methods:
 * the queues panel then shows a Pause or Resume button per role and the
 * paused tasks) and
 * `GET /api/events` (server-sent
 * events of task updates), and `GET /api/tasks/:id/steps` (a task's durable
 * steps, since 0.4.0, when the federation has `getTaskSteps()`: live tasks
 * then have a Steps button).
 * @param federation The federation (any `Federation` of `@fedwork/core`).
 * @param options `authorize`, `basePath`, `title`, `refreshInterval`,
 *                `pageSize`.
 * @returns The handler; it answers 404 outside `basePath`.
 * @throws {TypeError} When the federation or an option is invalid.
 * @throws {RangeError} When `refreshInterval` or `pageSize` is out of range.
 * @since 0.2.0
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { createDashboard } from "@fedwork/dashboard";
 *
 * const dashboard = createDashboard(federation, {
 *   basePath: "/admin/queues",
 *   authorize: (request) => isAdminSession(request),
 * });
 * const app = new Hono();
 * app.all("/admin/queues/*", (c) => dashboard(c.req.raw));
 * app.all("/admin/queues", (c) => dashboard(c.req.raw));
 * ```
 */
export function createDashboard(
  federation: DashboardFederation,
  options: DashboardOptions,
): DashboardHandler {
  if (
    typeof federation !== "object" || federation == null ||
    typeof federation.listFailedTasks !== "function" ||
    typeof federation.getQueueDepths !== "function"
  ) {
    throw new TypeError("createDashboard() needs a Fedwork federation as its first argument.");
  }
  const resolved = resolveDashboardOptions(options);
  const { basePath } = resolved;
  const api = new DashboardApi(federation, resolved.pageSize);

  return async (request) => {
    const url = new URL(request.url);
    let path: string;
    if (url.pathname === basePath || url.pathname === `${basePath}/`) path = "/";
    else if (url.pathname.startsWith(`${basePath}/`)) path = url.pathname.slice(basePath.length);
    else return text(404, "Not Found");
    if (!await isAuthorized(resolved.authorize, request)) return text(403, "Forbidden");
    try {
      if (request.method === "GET" || request.method === "HEAD") {
        if (path === "/") {
          const nonce = randomNonce();
          return withSecurityHeaders(
            new Response(
              request.method === "HEAD" ? null : renderPage({
                basePath,
                title: resolved.title,
                refreshIntervalMs: resolved.refreshIntervalMs,
                nonce,
                features: api.features,
              }),
              { headers: { "Content-Type": "text/html; charset=utf-8" } },
            ),
            nonce,
          );
        }
        if (path === "/api/overview") return json(200, await api.overview());
        if (path === "/api/failed") {
          return json(
            200,
            await api.failed(
              url.searchParams.get("cursor") ?? undefined,
              url.searchParams.get("task") ?? undefined,
            ),
          );
        }
        if (path === "/api/events") return api.events(request);
        const stepsOf = matchStepsRequest(path);
        if (stepsOf != null && api.features.steps) {
          return json(200, await taskStepsBody(federation, stepsOf));
        }
        const id = matchId(path, /^\/api\/failed\/([^/]+)$/);
        if (id != null) {
          const details = await api.failedTask(id);
          return details == null
            ? json(404, { error: "No such failed task." })
            : json(200, details);
        }
        return text(404, "Not Found");
      }
      if (request.method === "POST") {
        const replay = matchId(path, /^\/api\/failed\/([^/]+)\/replay$/);
        const discard = matchId(path, /^\/api\/failed\/([^/]+)\/discard$/);
        const release = matchId(path, /^\/api\/hosts\/([^/]+)\/release$/);
        const cancel = matchId(path, /^\/api\/tasks\/([^/]+)\/cancel$/);
        const pause = matchPauseRequest(path);
        if (
          replay == null && discard == null && release == null && cancel == null && pause == null
        ) {
          return text(404, "Not Found");
        }
        const refusal = checkCsrf(request);
        if (refusal != null) return json(403, { error: refusal });
        if (pause != null) {
          const { status, body } = await runPauseRequest(federation, pause);
          return json(status, body);
        }
        if (replay != null) return await api.replay(replay);
        if (release != null) return await api.release(release);
        if (cancel != null) return await api.cancel(cancel);
        return json(200, { discarded: await federation.discardFailedTask(discard!) });
      }
      return new Response("Method Not Allowed", {
        status: 405,
        headers: { Allow: "GET, HEAD, POST", "Content-Type": "text/plain; charset=utf-8" },
      });
    } catch (error) {
      logger.error("The dashboard failed to answer {method} {path}: {error}", {
        method: request.method,
        path,
        error,
      });
      return json(500, { error: "The dashboard could not answer; see the server's log." });
    }
  };
}

class DashboardApi {
  readonly #federation: DashboardFederation;
  readonly #pageSize: number;
  readonly features: {
    readonly progress: boolean;
    readonly hosts: boolean;
    readonly release: boolean;
    readonly cancel: boolean;
    readonly workers: boolean;
    readonly pause: boolean;
    readonly steps: boolean;
  };

  constructor(federation: DashboardFederation, pageSize: number) {
    this.#federation = federation;
    this.#pageSize = pageSize;
    this.features = {
      progress: typeof federation.watchTasks === "function",
      hosts: typeof federation.listUnhealthyHosts === "function",
      release: typeof federation.releaseHost === "function",
      cancel: typeof federation.cancelTask === "function",
      workers: typeof federation.listWorkers === "function",
      pause: canPause(federation),
      steps: canShowSteps(federation),
    };
  }

  async overview(): Promise<unknown> {
    const federation = this.#federation;
    const [queues, throughput, counts, hosts, workers, paused] = await Promise.all([
      federation.getQueueDepths(),
      federation.getThroughput({ minutes: 60 }),
      federation.countFailedTasks(),
      this.features.hosts ? federation.listUnhealthyHosts!() : undefined,
      this.features.workers ? federation.listWorkers!() : undefined,
      this.features.pause ? federation.listPaused!() : undefined,
    ]);
    return {
      generatedAt: new Date().toISOString(),
      features: this.features,
      queues: queues.map(serializeQueueDepth),
      throughput: throughput.map((bucket) => ({
        minute: bucket.minute.toISOString(),
        completed: bucket.completed,
        failed: bucket.failed,
        retried: bucket.retried,
        dropped: bucket.dropped,
      })),
      failedCounts: Object.fromEntries(counts),
      hosts: hosts == null ? null : hosts.map(serializeHostHealth),
      workers: workers == null ? null : workers.map(serializeWorker),
      paused: paused == null ? null : { tasks: [...paused.tasks], roles: [...paused.roles] },
    };
  }

  async failed(cursor: string | undefined, taskName: string | undefined): Promise<unknown> {
    let page;
    try {
      page = await this.#federation.listFailedTasks({
        limit: this.#pageSize,
        ...(cursor == null || cursor === "" ? {} : { cursor }),
        ...(taskName == null || taskName === "" ? {} : { taskName }),
      });
    } catch (error) {
      // A malformed cursor: start over rather than fail the page.
      if (!(error instanceof TypeError) || cursor == null) throw error;
      page = await this.#federation.listFailedTasks({ limit: this.#pageSize });
    }
    return {
      records: page.records.map(serializeTaskRecord),
      cursor: page.cursor ?? null,
    };
  }

  async failedTask(id: string): Promise<unknown> {
    const details = await this.#federation.getFailedTask(id);
    return details == null ? undefined : await serializeFailedTask(details);
  }

  async replay(id: string): Promise<Response> {
    try {
      const result = await this.#federation.retryFailedTask(id);
      logger.info("Replayed the failed task {messageId} from the dashboard.", { messageId: id });
      return json(200, { status: result.status, messageId: id });
    } catch (error) {
      if (error instanceof FailedTaskNotFoundError) {
        return json(404, { error: "No such failed task." });
      }
      if (error instanceof DeadHostError) return json(409, { error: error.message });
      if (
        error instanceof TaskNotDefinedError || error instanceof TaskValidationError ||
        error instanceof TaskQueueNotConfiguredError
      ) {
        return json(422, { error: error.message });
      }
      throw error;
    }
  }

  async release(host: string): Promise<Response> {
    const releaseHost = this.#federation.releaseHost;
    if (typeof releaseHost !== "function") {
      return json(404, { error: "Not available: the federation has no releaseHost()." });
    }
    const released = await releaseHost.call(this.#federation, host);
    logger.info("Released the host {host} from the dashboard.", { host, released });
    return json(200, { released });
  }

  async cancel(id: string): Promise<Response> {
    const cancelTask = this.#federation.cancelTask;
    if (typeof cancelTask !== "function") {
      return json(404, { error: "Not available: the federation has no cancelTask()." });
    }
    const result = await cancelTask.call(this.#federation, id, {
      reason: "cancelled from the dashboard",
    });
    logger.info("Cancelled task {messageId} from the dashboard: {status}.", {
      messageId: id,
      status: result.status,
      state: result.state,
    });
    return json(200, { status: result.status, state: result.state ?? null });
  }

  events(request: Request): Response {
    const watchTasks = this.#federation.watchTasks;
    if (typeof watchTasks !== "function") {
      return json(404, {
        error: "Live progress is not available: the federation has no watchTasks().",
      });
    }
    return new Response(
      streamTaskUpdates((signal) => watchTasks.call(this.#federation, { signal }), request),
      {
        headers: {
          "Content-Type": "text/event-stream; charset=utf-8",
          "Cache-Control": "no-store",
          "X-Content-Type-Options": "nosniff",
        },
      },
    );
  }
}

function matchId(path: string, pattern: RegExp): string | undefined {
  const match = pattern.exec(path);
  if (match == null) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

async function isAuthorized(
  authorize: ((request: Request) => boolean | Promise<boolean>) | undefined,
  request: Request,
): Promise<boolean> {
  if (authorize == null) return false;
  try {
    return await authorize(request) === true;
  } catch (error) {
    logger.error("The dashboard's authorize callback threw; the request is refused: {error}", {
      error,
    });
    return false;
  }
}

/** Why a state-changing request is refused, or `undefined` when it is not. */
function checkCsrf(request: Request): string | undefined {
  if (request.headers.get(DASHBOARD_CSRF_HEADER) == null) {
    return `The request lacks the ${DASHBOARD_CSRF_HEADER} header.`;
  }
  const site = request.headers.get("Sec-Fetch-Site");
  if (site != null && site !== "same-origin") {
    return "The request comes from another site.";
  }
  return undefined;
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

function withSecurityHeaders(response: Response, nonce?: string): Response {
  const headers = response.headers;
  headers.set(
    "Content-Security-Policy",
    [
      "default-src 'none'",
      nonce == null ? "" : `script-src 'nonce-${nonce}'`,
      nonce == null ? "" : `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].filter((directive) => directive !== "").join("; "),
  );
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("X-Frame-Options", "DENY");
  headers.set("Referrer-Policy", "no-referrer");
  headers.set("Cache-Control", "no-store");
  return response;
}

function json(status: number, body: unknown): Response {
  return withSecurityHeaders(
    new Response(JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json; charset=utf-8" },
    }),
  );
}

function text(status: number, body: string): Response {
  return withSecurityHeaders(
    new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8" } }),
  );
}
