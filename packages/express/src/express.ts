import type { NextFunction, Request as ExpressRequest, RequestHandler, Response } from "express";
import type { Federation } from "@fedwork/core";
import { sendFetchResponse, toFetchRequest } from "./node.ts";

/**
 * Returns the application data of a request's federation context.
 * @typeParam TContextData The federation's context data type.
 * @since 0.2.0
 */
export type ContextDataFactory<TContextData> = (
  req: ExpressRequest,
) => TContextData | Promise<TContextData>;

/**
 * Express middleware that serves a federation: actors, objects,
 * collections, inboxes, WebFinger and NodeInfo.  Requests the federation
 * does not serve go to the next handler, and so do requests for an
 * ActivityPub resource that do not ask for JSON-LD (a browser), so your
 * routes can render HTML at the same URL (mount {@link notAcceptableFallback}
 * after them to answer 406 when none does).  Mount it before any body
 * parser: it reads the request's stream itself.
 * @param federation The federation.
 * @param contextDataFactory Returns the context data of a request.
 * @returns The middleware.
 * @since 0.2.0
 * @example
 * ```ts
 * import express from "express";
 * import { integrateFederation } from "@fedwork/express";
 *
 * const app = express();
 * app.set("trust proxy", true);
 * app.use(integrateFederation(federation, (req) => ({ user: req.ip })));
 * ```
 */
export function integrateFederation<TContextData>(
  federation: Federation<TContextData>,
  contextDataFactory: ContextDataFactory<TContextData>,
): RequestHandler {
  return (req: ExpressRequest, res: Response, next: NextFunction) => {
    (async () => {
      const request = toFetchRequest(req, { origin: `${req.protocol}://${req.get("host")}` });
      const contextData = await contextDataFactory(req);
      let passed: "notFound" | "notAcceptable" | null = null;
      const response = await federation.fetch(request, {
        contextData,
        onNotFound: () => {
          passed = "notFound";
          return new Response(null, { status: 404 });
        },
        onNotAcceptable: () => {
          passed = "notAcceptable";
          return new Response(null, { status: 406 });
        },
      });
      if (passed == null) {
        await sendFetchResponse(res, response);
        return;
      }
      if (passed === "notAcceptable") {
        // Only when no later route answers does the browser get 406.
        res.locals.fedworkNotAcceptable = true;
      }
      next();
    })().catch(next);
  };
}

/**
 * Express middleware to mount after your routes: answers 406 Not
 * Acceptable (with `Vary: Accept`) to a request for an ActivityPub
 * resource that asked for something else than JSON-LD and that no route
 * served; passes anything else on.
 * @returns The middleware.
 * @since 0.2.0
 */
export function notAcceptableFallback(): RequestHandler {
  return (_req: ExpressRequest, res: Response, next: NextFunction) => {
    if (res.locals.fedworkNotAcceptable !== true) {
      next();
      return;
    }
    res.status(406).vary("Accept").type("text/plain").send("Not Acceptable");
  };
}
