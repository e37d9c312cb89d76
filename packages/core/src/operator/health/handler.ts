// The liveness and readiness endpoints as one fetch handler: JSON bodies,
// 200 or 503, refused to the public, one readiness check per cache period.
import { decideHealthAccess } from "./access.ts";
import { resolveHealthHandlerOptions } from "./options.ts";
import type { HealthHandlerOptions, HealthOperations, HealthReport } from "./types.ts";

/**
 * What the server knows of a request's connection: the client's address.
 * Deno's `Deno.serve()` handler info (`{ remoteAddr: { hostname } }`)
 * fits as it is.
 * @since 0.4.0
 */
export type HealthRequestInfo =
  | { readonly remoteAddress?: string | undefined }
  | { readonly remoteAddr?: { readonly hostname?: string } | undefined };

/**
 * The fetch handler `createHealthHandler()` returns.
 * @since 0.4.0
 */
export type HealthHandler = (request: Request, info?: HealthRequestInfo) => Promise<Response>;

/**
 * Makes the fetch handler of a liveness and a readiness endpoint:
 * `GET livenessPath` answers 200 `{"status":"live"}` without probing
 * anything; `GET readinessPath` answers the report of
 * `federation.checkHealth()` as JSON, 200 when ready and 503 when not, the
 * same report for every request within `cacheFor` (concurrent requests
 * share one check).  Other paths answer 404 and other methods 405, so the
 * application can hand it every request under its paths.  Only a bearer of
 * `token`, or a loopback client no proxy forwarded, may ask (see
 * {@link HealthHandlerOptions}); anyone else gets 403.  Pass the client's
 * address as the second argument: without it only the token grants access.
 * @param federation The federation (anything with `checkHealth()`).
 * @param options The paths, the access, the cache and the check options.
 * @returns The handler.
 * @throws {TypeError} When an option is invalid (the message names it).
 * @since 0.4.0
 * @example
 * ```ts ignore
 * const health = createHealthHandler(federation, { maxReadyMessages: 1000 });
 * Deno.serve((request, info) => {
 *   const { pathname } = new URL(request.url);
 *   if (pathname === "/healthz" || pathname === "/readyz") return health(request, info);
 *   return federation.fetch(request, { contextData: undefined });
 * });
 * ```
 */
export function createHealthHandler(
  federation: HealthOperations,
  options?: HealthHandlerOptions,
): HealthHandler {
  const resolved = resolveHealthHandlerOptions(options);
  let cached: { readonly at: number; readonly report: Promise<HealthReport> } | undefined;
  const readiness = (): Promise<HealthReport> => {
    const now = Date.now();
    if (cached === undefined || now - cached.at >= resolved.cacheMs) {
      const report = federation.checkHealth(resolved.check);
      cached = { at: now, report };
      // A check that threw is not kept: the next request tries again.
      report.catch(() => {
        if (cached?.report === report) cached = undefined;
      });
    }
    return cached.report;
  };
  return async (request, info) => {
    const { pathname } = new URL(request.url);
    const live = pathname === resolved.livenessPath;
    if (!live && pathname !== resolved.readinessPath) {
      return json(404, { error: `No health endpoint at ${pathname}.` });
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return json(405, { error: "Use GET." }, { Allow: "GET, HEAD" });
    }
    const access = await decideHealthAccess(request, remoteAddressOf(info), resolved);
    if (!access.allowed) return json(403, { error: access.reason });
    if (live) return json(200, { status: "live" });
    let report: HealthReport;
    try {
      report = await readiness();
    } catch (error) {
      return json(503, {
        ready: false,
        reasons: [`The health check failed: ${error instanceof Error ? error.message : error}`],
      });
    }
    return json(report.ready ? 200 : 503, report);
  };
}

function remoteAddressOf(info: HealthRequestInfo | undefined): string | undefined {
  // Anything else a server passes (an index, its own objects) says nothing.
  if (typeof info !== "object" || info == null) return undefined;
  if ("remoteAddress" in info && typeof info.remoteAddress === "string") {
    return info.remoteAddress;
  }
  if ("remoteAddr" in info && typeof info.remoteAddr?.hostname === "string") {
    return info.remoteAddr.hostname;
  }
  return undefined;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-store",
      ...headers,
    },
  });
}
