import { RouteNotRegisteredError } from "../http/errors.ts";
import { type ActorKeyPair, buildActorKeyPairs } from "./key-pairs.ts";

/**
 * What {@link loadActorKeyPairs} needs of a context: the actor URIs that
 * key ids are built on, and the origin the cache keys entries by.
 * @since 0.3.0
 */
export interface ActorKeyPairsContext {
  /** The origin the actors' URIs are built on. */
  readonly canonicalOrigin: string;
  /**
   * Builds an actor's URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   */
  getActorUri(identifier: string): URL;
}

/**
 * Returns an actor's key pairs as the application stores them: a key pairs
 * dispatcher.
 * @typeParam TContext The context the dispatcher gets.
 * @since 0.3.0
 */
export type ActorKeyPairsSource<TContext> = (
  ctx: TContext,
  identifier: string,
) => readonly CryptoKeyPair[] | Promise<readonly CryptoKeyPair[]>;

/**
 * Calls a key pairs dispatcher for an actor, checks what it returned and
 * gives the pairs their key ids and vocabulary objects.
 * @param dispatcher The key pairs dispatcher, if one is registered.
 * @param ctx The context to give the dispatcher.
 * @param identifier The actor's identifier.
 * @returns The key pairs.
 * @throws {RouteNotRegisteredError} When no dispatcher is registered
 *         (since 0.4.0).
 * @throws {TypeError} When the dispatcher returns something else than an
 *         array of key pairs.
 * @since 0.3.0
 */
export async function loadActorKeyPairs<TContext extends ActorKeyPairsContext>(
  dispatcher: ActorKeyPairsSource<TContext> | undefined,
  ctx: TContext,
  identifier: string,
): Promise<ActorKeyPair[]> {
  if (dispatcher == null) {
    throw new RouteNotRegisteredError(
      "key pairs dispatcher",
      "setActorDispatcher(…).setKeyPairsDispatcher",
    );
  }
  const pairs = await dispatcher(ctx, identifier);
  if (
    !Array.isArray(pairs) ||
    pairs.some((pair) =>
      !(pair?.privateKey instanceof CryptoKey && pair.publicKey instanceof CryptoKey)
    )
  ) {
    throw new TypeError(
      `The key pairs dispatcher must return an array of CryptoKeyPairs; for ${
        JSON.stringify(identifier)
      } it returned something else.`,
    );
  }
  return buildActorKeyPairs(ctx.getActorUri(identifier), pairs);
}

/**
 * Keeps actors' key pairs in memory for a while, so that signing a fan-out
 * of one activity to a thousand inboxes calls the key pairs dispatcher (and
 * its `importJwk()`, which costs about as much as a signature) once, not a
 * thousand times.  Per process; concurrent lookups share one call.
 * Internal.
 * @typeParam TContext The context lookups are made with.
 * @since 0.2.0
 */
export class ActorKeyPairsCache<TContext extends ActorKeyPairsContext> {
  readonly #load: (ctx: TContext, identifier: string) => Promise<ActorKeyPair[]>;
  readonly #ttlMs: number;
  readonly #limit: number;
  readonly #entries = new Map<string, { expires: number; pairs: Promise<ActorKeyPair[]> }>();

  /**
   * @param load Looks an actor's key pairs up on a miss.
   * @param ttlMs How long pairs are kept, in milliseconds.
   * @param limit How many actors' pairs are kept at most.
   */
  constructor(
    load: (ctx: TContext, identifier: string) => Promise<ActorKeyPair[]>,
    ttlMs = 60_000,
    limit = 1024,
  ) {
    this.#load = load;
    this.#ttlMs = ttlMs;
    this.#limit = limit;
  }

  /**
   * Returns an actor's key pairs, from the cache when fresh.
   * @param ctx The context to look them up with on a miss.
   * @param identifier The actor's identifier.
   * @returns The key pairs.
   * @throws What the lookup throws (e.g. without a key pairs dispatcher).
   */
  get(ctx: TContext, identifier: string): Promise<ActorKeyPair[]> {
    const key = `${ctx.canonicalOrigin}\n${identifier}`;
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry != null && entry.expires > now) return entry.pairs;
    const pairs = this.#load(ctx, identifier);
    // A failed lookup is not kept: the next delivery asks again.
    pairs.catch(() => {
      if (this.#entries.get(key)?.pairs === pairs) this.#entries.delete(key);
    });
    this.#entries.delete(key);
    this.#entries.set(key, { expires: now + this.#ttlMs, pairs });
    if (this.#entries.size > this.#limit) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    return pairs;
  }
}
