import postgres, { type Sql } from "postgres";

/** A postgres.js client together with whether Fedwork must close it. */
export interface ResolvedClient {
  readonly sql: Sql;
  /** `true` when Fedwork opened the client from a URL and so closes it. */
  readonly ownsClient: boolean;
}

/**
 * Turns the `client` argument of the queue and store constructors into a
 * postgres.js client: a URL opens a new client that the caller owns and
 * closes on dispose; an `Sql` instance is borrowed and left open (the
 * first argument of `@fedify/postgres`'s constructors, so their form works
 * unchanged).
 * @param client A postgres.js `Sql` instance or a connection URL.
 * @param where The constructor, e.g. `"new PostgresKvStore()"`, for the
 *              error message.
 * @returns The client and its ownership.
 * @throws {TypeError} When `client` is neither.
 */
export function resolveClient(client: unknown, where: string): ResolvedClient {
  if (typeof client === "string" || client instanceof URL) {
    return { sql: postgres(client.toString(), { onnotice: () => {} }), ownsClient: true };
  }
  // A postgres.js Sql instance is a tagged-template function.
  if (typeof client === "function" && typeof (client as Partial<Sql>).unsafe === "function") {
    return { sql: client as Sql, ownsClient: false };
  }
  const got = client === null
    ? "null"
    : typeof client === "object"
    ? "an object (the options come second)"
    : typeof client;
  throw new TypeError(
    `The first argument of ${where} must be a postgres.js Sql client (postgres(url), as in ` +
      `Fedify) or a connection URL; got ${got}.`,
  );
}
