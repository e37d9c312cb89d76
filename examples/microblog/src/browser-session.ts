// A browser's session with the app: one HttpOnly cookie and the token the
// app's forms carry.
//
// The cookie holds a random nonce; once its browser signed in with the
// API token, also an expiry and an HMAC-SHA256 of both (and of the app's
// origin) keyed with the API token.  Nothing is kept on the server, so any
// number of web processes share sessions, and changing API_TOKEN signs
// every browser out.  Each form carries a token derived from the nonce
// (double submit): another site can make a browser post a form, but it can
// neither read the cookie nor so learn the token.

/** A session as the request's cookie tells it (a fresh one without a valid cookie). */
export interface BrowserSession {
  /** Whether its browser signed in with the API token. */
  readonly signedIn: boolean;
  /** The token the session's forms carry in their `csrf` field. */
  readonly formToken: string;
  /**
   * A `Set-Cookie` value when the request had no valid cookie: the page
   * that shows a form must send it, or the form cannot be posted.
   */
  readonly setCookie?: string;
}

/** How long a sign-in lasts. */
const SIGN_IN_SECONDS = 7 * 24 * 60 * 60;

const encoder = new TextEncoder();

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  let binary = "";
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Sessions of the browsers that use an app's pages.
 */
export class BrowserSessions {
  readonly #origin: URL;
  readonly #key: Promise<CryptoKey> | undefined;
  /** The cookie's name. */
  readonly cookieName: string;

  /**
   * @param origin The app's public origin: the cookie is `Secure` and
   *               `__Host-` on https; its port is in the cookie's name,
   *               since browsers share cookies between a host's ports.
   * @param apiToken The API token, which signs sign-ins; without one
   *                 nobody can sign in (and nobody needs to).
   */
  constructor(origin: URL, apiToken: string | undefined) {
    this.#origin = origin;
    this.#key = apiToken == null ? undefined : crypto.subtle.importKey(
      "raw",
      encoder.encode(apiToken),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    const port = origin.port === "" ? "" : `-${origin.port}`;
    this.cookieName = `${origin.protocol === "https:" ? "__Host-" : ""}microblog-session${port}`;
  }

  #cookie(value: string, maxAgeSeconds: number): string {
    // Lax, not Strict: a link from another site to a profile must not make
    // the page answer with a fresh cookie that overwrites the sign-in.
    // Cross-site POSTs carry no Lax cookie either way.
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${
      this.#origin.protocol === "https:" ? "; Secure" : ""
    }`;
  }

  /**
   * What a sign-in's MAC covers: the origin too, so that one API token
   * shared by two instances does not sign a browser in to both.
   */
  #signed(nonce: string, expires: string): Uint8Array {
    return encoder.encode(`${this.#origin.origin}\n${nonce}\n${expires}`);
  }

  async #mac(nonce: string, expires: string): Promise<Uint8Array> {
    return new Uint8Array(
      await crypto.subtle.sign(
        "HMAC",
        await this.#key!,
        this.#signed(nonce, expires) as BufferSource,
      ),
    );
  }

  async #formToken(nonce: string): Promise<string> {
    return base64url(
      await crypto.subtle.digest("SHA-256", encoder.encode(`microblog form token\n${nonce}`)),
    );
  }

  async #fresh(): Promise<BrowserSession> {
    const nonce = base64url(crypto.getRandomValues(new Uint8Array(32)));
    return {
      signedIn: false,
      formToken: await this.#formToken(nonce),
      setCookie: this.#cookie(nonce, SIGN_IN_SECONDS),
    };
  }

  /**
   * The session of a request, from its cookie.
   * @param request The request.
   * @returns The session; a fresh, signed-out one (with `setCookie`) when
   *          the cookie is missing, malformed, expired or not signed with
   *          the current API token.
   */
  async read(request: Request): Promise<BrowserSession> {
    const value = readCookie(request, this.cookieName);
    const parts = value?.split(".") ?? [];
    if (parts.length === 0 || !/^[\w-]{43}$/.test(parts[0])) return await this.#fresh();
    const [nonce, expires, mac] = parts;
    if (parts.length === 1) return { signedIn: false, formToken: await this.#formToken(nonce) };
    if (
      parts.length !== 3 || this.#key == null || !/^\d+$/.test(expires) ||
      Number(expires) * 1000 < Date.now()
    ) {
      return await this.#fresh();
    }
    const sent = fromBase64url(mac);
    const valid = sent != null && await crypto.subtle.verify(
      "HMAC",
      await this.#key,
      sent as BufferSource,
      this.#signed(nonce, expires) as BufferSource,
    );
    if (!valid) return await this.#fresh();
    return { signedIn: true, formToken: await this.#formToken(nonce) };
  }

  /**
   * Signs a browser in: a new nonce (a session fixed by someone else before
   * the sign-in is worth nothing after it), signed with the API token.
   * @returns The `Set-Cookie` value.
   * @throws {Error} Without an API token.
   */
  async signIn(): Promise<string> {
    if (this.#key == null) throw new Error("Nobody signs in without an API token.");
    const nonce = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const expires = String(Math.floor(Date.now() / 1000) + SIGN_IN_SECONDS);
    const mac = base64url(await this.#mac(nonce, expires));
    return this.#cookie(`${nonce}.${expires}.${mac}`, SIGN_IN_SECONDS);
  }

  /** The `Set-Cookie` value that signs a browser out (and forgets its session). */
  signOut(): string {
    return this.#cookie("", 0);
  }
}

function fromBase64url(text: string | undefined): Uint8Array | undefined {
  if (text == null || !/^[\w-]+$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The value of a cookie the request carries, or `undefined`. */
function readCookie(request: Request, name: string): string | undefined {
  for (const pair of (request.headers.get("cookie") ?? "").split(";")) {
    const index = pair.indexOf("=");
    if (index > 0 && pair.slice(0, index).trim() === name) return pair.slice(index + 1).trim();
  }
  return undefined;
}
