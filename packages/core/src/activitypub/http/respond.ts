import type { DocumentLoader, Object as APObject } from "@fedify/vocab";
import { assertKnownOptions } from "../../options/known-options.ts";
import { createFetchDocumentLoader } from "../network/document-loader.ts";
import { acceptsJsonLd } from "./negotiation.ts";
import { createActivityJsonResponse } from "./responses.ts";
import { DEFAULT_USER_AGENT } from "../../http/user-agent.ts";

/**
 * Options for {@link respondWithObject} and
 * {@link respondWithObjectIfAcceptable}, as in Fedify.
 * @since 0.3.0
 */
export interface RespondWithObjectOptions {
  /**
   * Loads the JSON-LD contexts the object is compacted with.
   * @default a loader serving the well-known contexts bundled with
   *          `@fedify/vocab-runtime` and fetching others through
   *          `fetchRemote()`, public addresses only
   */
  readonly contextLoader?: DocumentLoader;
}

let defaultContextLoader: DocumentLoader | undefined;

/**
 * Answers with a vocabulary object as an ActivityPub document
 * (`application/activity+json`, `Vary: Accept`), as Fedify's
 * `respondWithObject()` does.  Useful in a route of the application's own
 * that serves an object outside the federation's dispatchers.
 * @param object The object.
 * @param options The context loader.
 * @returns The response.
 * @throws {Error} When a context the object needs cannot be loaded.
 * @throws {UnknownOptionError} When an option is not `contextLoader`.
 * @since 0.3.0
 * @example
 * ```ts
 * import { Note } from "@fedify/vocab";
 * import { respondWithObject } from "@fedwork/core";
 *
 * const response = await respondWithObject(
 *   new Note({ id: new URL("https://example.com/notes/1"), content: "Hi" }),
 * );
 * ```
 */
export async function respondWithObject(
  object: APObject,
  options: RespondWithObjectOptions = {},
): Promise<Response> {
  assertKnownOptions(options, ["contextLoader"], { where: "respondWithObject()" });
  defaultContextLoader ??= createFetchDocumentLoader({
    userAgent: DEFAULT_USER_AGENT,
    allowPrivateAddress: false,
  });
  const document = await object.toJsonLd({
    contextLoader: options.contextLoader ?? defaultContextLoader,
  });
  return createActivityJsonResponse(document);
}

/**
 * Answers with a vocabulary object when the request asks for JSON-LD
 * (see {@link respondWithObject}), as Fedify's
 * `respondWithObjectIfAcceptable()` does.
 * @param object The object.
 * @param request The request whose `Accept` header decides.
 * @param options The context loader.
 * @returns The response, or `null` when the request prefers something
 *          else (a browser asking for HTML), for the application to answer.
 * @throws {Error} When a context the object needs cannot be loaded.
 * @since 0.3.0
 */
export async function respondWithObjectIfAcceptable(
  object: APObject,
  request: Request,
  options: RespondWithObjectOptions = {},
): Promise<Response | null> {
  if (!acceptsJsonLd(request)) return null;
  return await respondWithObject(object, options);
}
