/**
 * `@fedwork/hono`: Hono middleware that serves a Fedwork federation.
 * @module
 * @since 0.2.0
 */
import type { Federation } from "@fedwork/core";
import type { Context, Env, MiddlewareHandler } from "hono";

/**
 * Returns the application data of a request's federation context.
 * @typeParam TContextData The federation's context data type.
 * @typeParam E The Hono environment.
 * @since 0.2.0
 */
export type ContextDataFactory<TContextData, E extends Env = Env> = (
  c: Context<E>,
) => TContextData | Promise<TContextData>;

/**
 * Hono middleware that serves a federation: actors, objects, collections,
 * inboxes, WebFinger and NodeInfo.  Requests the federation does not serve
 * go to the next handler (`onNotFound` calls `next()`), and so do requests
 * for an ActivityPub resource that do not ask for JSON-LD, so that your
 * routes can render HTML at the same URL; when no route does (404), such a
 * request gets 406 Not Acceptable.
 * @param federation The federation.
 * @param contextDataFactory Returns the context data of a request.
 * @returns The middleware.
 * @since 0.2.0
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { federation as serveFederation } from "@fedwork/hono";
 *
 * const app = new Hono();
 * app.use(serveFederation(federation, (c) => ({ ip: c.req.header("x-real-ip") })));
 * app.get("/users/:name", (c) => c.html(`<h1>${c.req.param("name")}</h1>`));
 * ```
 */
export function federation<TContextData, E extends Env = Env>(
  federation: Federation<TContextData>,
  contextDataFactory: ContextDataFactory<TContextData, E>,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const contextData = await contextDataFactory(c);
    return await federation.fetch(c.req.raw, {
      contextData,
      onNotFound: async () => {
        await next();
        return c.res;
      },
      onNotAcceptable: async () => {
        await next();
        if (c.res.status !== 404) return c.res;
        return new Response("Not Acceptable", {
          status: 406,
          headers: { "Content-Type": "text/plain; charset=utf-8", Vary: "Accept" },
        });
      },
    });
  };
}
