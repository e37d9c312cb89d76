// The dashboard's pause and resume requests: POST
// /api/paused/task/:name/pause|resume and /api/paused/role/:role/pause|resume,
// forwarded to the federation's pauseTask(), resumeTask(), pauseRole() and
// resumeRole().
import { getLogger } from "@logtape/logtape";
import type { DashboardFederation, DashboardRole } from "./source.ts";

const logger = getLogger(["fedwork", "dashboard"]);

const ROLES: readonly DashboardRole[] = ["inbox", "outbox", "fanout", "task"];
const PAUSE_PATH = /^\/api\/paused\/(task|role)\/([^/]+)\/(pause|resume)$/;

/** A pause or resume request, parsed from its path. */
export interface PauseRequest {
  readonly kind: "task" | "role";
  readonly name: string;
  readonly action: "pause" | "resume";
}

/**
 * Whether the federation has everything pausing from the dashboard needs.
 * @param federation The federation.
 */
export function canPause(federation: DashboardFederation): boolean {
  return typeof federation.listPaused === "function" &&
    typeof federation.pauseTask === "function" && typeof federation.resumeTask === "function" &&
    typeof federation.pauseRole === "function" && typeof federation.resumeRole === "function";
}

/**
 * Parses a POST path under the base path as a pause or resume request.
 * @param path The path.
 * @returns The request, or `undefined` when it is not one.
 */
export function matchPauseRequest(path: string): PauseRequest | undefined {
  const match = PAUSE_PATH.exec(path);
  if (match == null) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(match[2]);
  } catch {
    return undefined;
  }
  return {
    kind: match[1] as "task" | "role",
    name,
    action: match[3] as "pause" | "resume",
  };
}

/**
 * Carries out a pause or resume request (its CSRF check already passed).
 * @param federation The federation.
 * @param request The request.
 * @returns `{ paused }` with what is paused now; 404 when the federation
 *          cannot pause, 422 for an unknown role.
 */
export async function runPauseRequest(
  federation: DashboardFederation,
  request: PauseRequest,
): Promise<{ status: number; body: unknown }> {
  if (!canPause(federation)) {
    return { status: 404, body: { error: "Not available: the federation cannot pause work." } };
  }
  const { kind, name, action } = request;
  if (kind === "role") {
    if (!ROLES.includes(name as DashboardRole)) {
      return { status: 422, body: { error: `No such role: ${name}.` } };
    }
    const role = name as DashboardRole;
    await (action === "pause" ? federation.pauseRole!(role) : federation.resumeRole!(role));
  } else {
    await (action === "pause" ? federation.pauseTask!(name) : federation.resumeTask!(name));
  }
  logger.info("{action} the {kind} {name} from the dashboard.", {
    action: action === "pause" ? "Paused" : "Resumed",
    kind,
    name,
  });
  return { status: 200, body: { paused: await federation.listPaused!() } };
}
