import { ACTIVITY_JSON_MEDIA_TYPE } from "../http/negotiation.ts";

/**
 * A link of a JRD (RFC 7033 §4.4.4).
 * @since 0.2.0
 */
export interface WebFingerLink {
  readonly rel: string;
  readonly type?: string;
  readonly href?: string;
  readonly template?: string;
  readonly titles?: Readonly<Record<string, string>>;
  readonly properties?: Readonly<Record<string, string | null>>;
}

/**
 * What a WebFinger lookup callback answers about an actor.
 * @since 0.2.0
 */
export interface WebFingerActor {
  /** The actor's URI: the `self` link and the first alias. */
  readonly actorUri: URL;
  /** The canonical username: the subject is `acct:username@host`. */
  readonly username: string;
  /** More aliases, e.g. the profile page's URL. */
  readonly aliases?: readonly URL[];
  /** More links, e.g. `http://webfinger.net/rel/profile-page`. */
  readonly links?: readonly WebFingerLink[];
}

/**
 * Options for {@link handleWebFinger}.
 * @since 0.2.0
 */
export interface WebFingerHandlerOptions {
  /**
   * Finds an actor by the username of an `acct:username@host` resource.
   * Usernames are compared as the callback sees fit (Mastodon ignores case).
   */
  readonly lookupUsername: (
    username: string,
  ) => WebFingerActor | null | Promise<WebFingerActor | null>;
  /** Finds an actor by its URI (a resource given as an http(s) URL). */
  readonly lookupActorUri: (uri: URL) => WebFingerActor | null | Promise<WebFingerActor | null>;
  /**
   * Finds an actor by another http(s) URI that stands for it (a profile
   * page's URL, say), asked when `lookupActorUri` finds none.
   * @default none: such resources get 404
   * @since 0.3.0
   */
  readonly lookupAlias?: (uri: URL) => WebFingerActor | null | Promise<WebFingerActor | null>;
  /**
   * The host of `acct:` handles (e.g. `example.com` when the server runs at
   * `ap.example.com`).
   * @default the request URL's host
   */
  readonly host?: string;
}

function plain(status: number, text: string): Response {
  return new Response(text, {
    status,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Access-Control-Allow-Origin": "*",
    },
  });
}

type Resource = { readonly acct: { user: string; host: string } } | { readonly uri: URL };

function parseResource(resource: string): Resource | null {
  let acct = resource.match(/^acct:(.+)$/is)?.[1];
  // Some servers send bare user@host (or @user@host) handles.
  if (acct == null && !/^[a-z][a-z0-9+.-]*:/i.test(resource)) acct = resource.replace(/^@/, "");
  if (acct != null) {
    const at = acct.lastIndexOf("@");
    if (at < 1 || at === acct.length - 1) return null;
    try {
      return {
        acct: {
          user: decodeURIComponent(acct.slice(0, at)),
          host: acct.slice(at + 1).toLowerCase(),
        },
      };
    } catch {
      return null;
    }
  }
  try {
    const uri = new URL(resource);
    return uri.protocol === "http:" || uri.protocol === "https:" ? { uri } : null;
  } catch {
    return null;
  }
}

/**
 * Answers a WebFinger request (`/.well-known/webfinger?resource=…`) from
 * lookup callbacks: the resource is an `acct:user@host` handle (also bare
 * `user@host`) or an actor's URI.  The JRD has the subject
 * `acct:username@host`, the actor's URI (and any more aliases) as aliases,
 * a `self` link of type `application/activity+json`, and any more links;
 * it is served as `application/jrd+json` with `Access-Control-Allow-Origin:
 * *`.  Answers 400 when `resource` is missing or unparseable, 404 when the
 * handle's host is neither `host` nor the request's host, or no actor is
 * found.
 * @param request The request.
 * @param options The lookup callbacks and the handles' host.
 * @returns The response.
 * @since 0.2.0
 * @example
 * ```ts
 * import { handleWebFinger } from "./handler.ts";
 *
 * const response = await handleWebFinger(
 *   new Request("https://example.com/.well-known/webfinger?resource=acct:alice@example.com"),
 *   {
 *     lookupUsername: (username) =>
 *       username === "alice"
 *         ? { username, actorUri: new URL("https://example.com/users/alice") }
 *         : null,
 *     lookupActorUri: () => null,
 *   },
 * );
 * ```
 */
export async function handleWebFinger(
  request: Request,
  options: WebFingerHandlerOptions,
): Promise<Response> {
  const url = new URL(request.url);
  const resourceParameter = url.searchParams.get("resource");
  if (resourceParameter == null || resourceParameter.trim() === "") {
    return plain(400, "The resource query parameter is required.");
  }
  const resource = parseResource(resourceParameter.trim());
  if (resource == null) {
    return plain(400, "The resource must be an acct: handle or an http(s) URI.");
  }
  const host = (options.host ?? url.host).toLowerCase();
  let actor: WebFingerActor | null;
  if ("acct" in resource) {
    // The web host's handles are the same accounts (Fedify answers them
    // too); the subject names the canonical handle host.
    if (resource.acct.host !== host && resource.acct.host !== url.host.toLowerCase()) {
      return plain(404, "No such account on this server.");
    }
    actor = await options.lookupUsername(resource.acct.user);
  } else {
    actor = await options.lookupActorUri(resource.uri) ??
      await options.lookupAlias?.(resource.uri) ?? null;
  }
  if (actor == null) return plain(404, "No such account on this server.");
  const subject = `acct:${actor.username}@${host}`;
  const aliases = [actor.actorUri, ...(actor.aliases ?? [])].map((alias) => alias.href);
  const jrd = {
    subject,
    aliases: [...new Set(aliases)],
    links: [
      { rel: "self", type: ACTIVITY_JSON_MEDIA_TYPE, href: actor.actorUri.href },
      ...(actor.links ?? []),
    ],
  };
  return new Response(JSON.stringify(jrd), {
    headers: {
      "Content-Type": "application/jrd+json",
      "Access-Control-Allow-Origin": "*",
    },
  });
}
