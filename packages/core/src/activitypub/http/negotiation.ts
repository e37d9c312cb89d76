/**
 * The media type of ActivityStreams documents.
 * @since 0.2.0
 */
export const ACTIVITY_JSON_MEDIA_TYPE = "application/activity+json";

const ACTIVITY_STREAMS_PROFILE = "https://www.w3.org/ns/activitystreams";

interface MediaRange {
  readonly type: string;
  readonly parameters: ReadonlyMap<string, string>;
  readonly q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(",")) {
    const [type, ...rawParameters] = part.split(";").map((piece) => piece.trim());
    if (!/^[^\s/]+\/[^\s/]+$/.test(type)) continue;
    const parameters = new Map<string, string>();
    for (const raw of rawParameters) {
      const index = raw.indexOf("=");
      if (index < 1) continue;
      parameters.set(
        raw.slice(0, index).trim().toLowerCase(),
        raw.slice(index + 1).trim().replace(/^"(.*)"$/s, "$1"),
      );
    }
    const q = parameters.has("q") ? Number(parameters.get("q")) : 1;
    ranges.push({ type: type.toLowerCase(), parameters, q: Number.isFinite(q) ? q : 0 });
  }
  return ranges;
}

function isJsonLd(range: MediaRange): boolean {
  if (range.type === ACTIVITY_JSON_MEDIA_TYPE || range.type === "application/json") return true;
  if (range.type !== "application/ld+json") return false;
  // A JSON-LD request for some other profile is not asking for ActivityStreams.
  const profile = range.parameters.get("profile");
  return profile == null || profile.split(/\s+/).includes(ACTIVITY_STREAMS_PROFILE);
}

function isHtml(range: MediaRange): boolean {
  return range.type === "text/html" || range.type === "application/xhtml+xml";
}

/**
 * Tells whether a request asks for an ActivityPub (JSON-LD) representation:
 * its `Accept` header names `application/activity+json`,
 * `application/ld+json` (with no profile or the ActivityStreams profile) or
 * `application/json`, with a preference no lower than for HTML (ties go to
 * whichever comes first).  Wildcards and a missing header count as not
 * asking, so that a browser gets the application's HTML page.
 * @param request The request.
 * @returns `true` to answer with JSON-LD; `false` to answer "not
 *          acceptable" (or let the application serve HTML).
 * @since 0.2.0
 */
export function acceptsJsonLd(request: Request): boolean {
  const header = request.headers.get("accept");
  if (header == null) return false;
  let json: { q: number; index: number } | null = null;
  let html: { q: number; index: number } | null = null;
  for (const [index, range] of parseAccept(header).entries()) {
    if (range.q <= 0) continue;
    if (isJsonLd(range) && (json == null || range.q > json.q)) json = { q: range.q, index };
    if (isHtml(range) && (html == null || range.q > html.q)) html = { q: range.q, index };
  }
  if (json == null) return false;
  if (html == null) return true;
  return json.q > html.q || (json.q === html.q && json.index < html.index);
}
