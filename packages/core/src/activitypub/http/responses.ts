import { ACTIVITY_JSON_MEDIA_TYPE } from "./negotiation.ts";

/**
 * Answers with an ActivityPub document: `Content-Type:
 * application/activity+json` and `Vary: Accept` (the same URL serves HTML
 * to browsers, so caches must key on `Accept`).
 * @param document The JSON-LD document (compacted, with its `@context`).
 * @param init The status and extra headers; 200 by default.
 * @returns The response.
 * @since 0.2.0
 */
export function createActivityJsonResponse(document: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", ACTIVITY_JSON_MEDIA_TYPE);
  headers.append("Vary", "Accept");
  return new Response(JSON.stringify(document), { ...init, headers });
}

/**
 * Answers 406 Not Acceptable, with `Vary: Accept`: what a request for an
 * ActivityPub resource gets when it does not ask for JSON-LD and the
 * application serves nothing else there.
 * @returns The response.
 * @since 0.2.0
 */
export function createNotAcceptableResponse(): Response {
  return new Response("Not Acceptable", {
    status: 406,
    headers: { "Content-Type": "text/plain; charset=utf-8", Vary: "Accept" },
  });
}

/**
 * Answers 404 Not Found, with `Vary: Accept`.
 * @returns The response.
 * @since 0.2.0
 */
export function createNotFoundResponse(): Response {
  return new Response("Not Found", {
    status: 404,
    headers: { "Content-Type": "text/plain; charset=utf-8", Vary: "Accept" },
  });
}
