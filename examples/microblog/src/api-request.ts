// The checks a request passes before it is believed: a JSON API request
// comes from the app's own pages or from a program (not from another site a
// signed-in browser visits) and carries the right bearer token; a form post
// comes from the app's own origin; either body is small and read within a
// time limit.

/** Why {@link crossSiteRefusal} refused a request. */
export type CrossSiteReason = "content-type" | "sec-fetch-site" | "origin";

/**
 * Tells whether a state-changing request may come from another site.  A
 * browser lets any page send a cross-site POST whose type a plain HTML form
 * can produce (`text/plain`, `application/x-www-form-urlencoded`,
 * `multipart/form-data`), with the user's cookies and without asking the
 * server first; `application/json` needs a CORS preflight, which this app
 * never grants.  Browsers also say where a request comes from: a request
 * whose `Sec-Fetch-Site` is `cross-site` or `same-site` is refused (a
 * sibling host, e.g. another port of 127.0.0.1 or a user-content subdomain,
 * is no more trusted than a foreign site), and so is one whose `Origin` is
 * not the app's.  Programs (curl, the demo) send neither header.
 * @param request The request.
 * @param origin The app's public origin.
 * @returns Why the request is refused, or `undefined` when it may proceed.
 */
export function crossSiteRefusal(request: Request, origin: URL): CrossSiteReason | undefined {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== "application/json") return "content-type";
  const site = request.headers.get("sec-fetch-site");
  // "none" is a request the user made (a bookmark, the address bar).
  if (site != null && site !== "same-origin" && site !== "none") return "sec-fetch-site";
  const from = request.headers.get("origin");
  if (from != null && from !== origin.origin) return "origin";
  return undefined;
}

/** Why {@link crossSiteFormRefusal} refused a form post. */
export type CrossSiteFormReason = "content-type" | "sec-fetch-site" | "origin";

/**
 * Tells whether a form post may come from another site.  The app's forms
 * post `application/x-www-form-urlencoded` from its own pages, so a
 * browser sends `Origin` (every current browser does on a POST) and
 * `Sec-Fetch-Site: same-origin`.  `Origin` is compared with the app's
 * public origin, not with the request's own URL or `Host`: behind a
 * reverse proxy the request arrives for `http://127.0.0.1:8000` while the
 * page was `https://blog.example`.  A post without `Origin`, with
 * `Origin: null` (a sandboxed frame, a redirect across sites) or from a
 * sibling host is refused; a program acts through the JSON API instead.
 * This is one of three checks: the form's token must match the session
 * cookie's (see `browser-session.ts`), and the cookie is `SameSite=Lax`.
 * @param request The request.
 * @param origin The app's public origin.
 * @returns Why the request is refused, or `undefined` when it may proceed.
 */
export function crossSiteFormRefusal(
  request: Request,
  origin: URL,
): CrossSiteFormReason | undefined {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return "content-type";
  const site = request.headers.get("sec-fetch-site");
  if (site != null && site !== "same-origin") return "sec-fetch-site";
  if (request.headers.get("origin") !== origin.origin) return "origin";
  return undefined;
}

/**
 * Reads the bearer token of a request's `Authorization` header.
 * @param request The request.
 * @returns The token, `undefined` without the header, or `null` when the
 *          header is not a bearer token.
 */
export function bearerToken(request: Request): string | null | undefined {
  const header = request.headers.get("authorization");
  if (header == null) return undefined;
  return header.match(/^Bearer +([^\s]+) *$/i)?.[1] ?? null;
}

/**
 * Compares a token a client sent with the secret one in a time that does
 * not depend on where they first differ (both are hashed first, so their
 * lengths do not show either).
 * @param sent The token from the request.
 * @param secret The configured token.
 * @returns Whether they are equal.
 */
export async function tokenMatches(sent: string, secret: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all(
    [sent, secret].map(async (text) =>
      new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)))
    ),
  );
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

/** Limits of {@link readJsonObject}. */
export interface BodyLimits {
  /** The largest body accepted, in bytes. */
  readonly maxBytes: number;
  /** How long the client may take to send it, in milliseconds. */
  readonly timeoutMs: number;
}

/** What {@link readJsonObject} found. */
export type JsonObjectBody =
  | { readonly ok: true; readonly value: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly status: 400 | 408 | 413 };

/** What {@link readFormBody} found. */
export type FormBody =
  | { readonly ok: true; readonly value: URLSearchParams }
  | { readonly ok: false; readonly status: 400 | 408 | 413 };

/**
 * Reads a request body as UTF-8 text, stopping at a size and a time limit.
 * @returns The text, or the status to answer: 413 past the size limit, 408
 *          past the time limit, 400 without a body or when it is not UTF-8.
 */
async function readText(
  request: Request,
  limits: BodyLimits,
): Promise<
  { readonly ok: true; readonly text: string } | {
    readonly ok: false;
    readonly status: 400 | 408 | 413;
  }
> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limits.maxBytes) return { ok: false, status: 413 };
  if (request.body == null) return { ok: false, status: 400 };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limits.timeoutMs);
  });
  try {
    while (true) {
      const read = await Promise.race([reader.read(), timedOut]);
      if (read === "timeout") return { ok: false, status: 408 };
      if (read.done) break;
      size += read.value.byteLength;
      // Content-Length may be absent (chunked) or wrong: count what arrives.
      if (size > limits.maxBytes) return { ok: false, status: 413 };
      chunks.push(read.value);
    }
  } finally {
    clearTimeout(timer);
    // Stops an unfinished upload; a no-op once the body is read.
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, status: 400 };
  }
}

/**
 * Reads a request body that must be a JSON object, stopping at a size and a
 * time limit.
 * @param request The request.
 * @param limits The size and time limits.
 * @returns The object, or the status to answer: 413 past the size limit,
 *          408 past the time limit, 400 when it is not a JSON object.
 */
export async function readJsonObject(
  request: Request,
  limits: BodyLimits,
): Promise<JsonObjectBody> {
  const body = await readText(request, limits);
  if (!body.ok) return body;
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    return { ok: false, status: 400 };
  }
  if (typeof value !== "object" || value == null || Array.isArray(value)) {
    return { ok: false, status: 400 };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Reads an `application/x-www-form-urlencoded` body (what the app's own
 * forms send), stopping at a size and a time limit.
 * @param request The request.
 * @param limits The size and time limits.
 * @returns The fields, or the status to answer, as {@link readJsonObject}.
 */
export async function readFormBody(request: Request, limits: BodyLimits): Promise<FormBody> {
  const body = await readText(request, limits);
  return body.ok ? { ok: true, value: new URLSearchParams(body.text) } : body;
}
