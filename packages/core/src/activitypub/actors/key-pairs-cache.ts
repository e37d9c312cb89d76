import { type ActorKeyPair, buildActorKeyPairs } from "./key-pairs.ts";
import type { Context } from "../../federation/context-api.ts";
import { RouteNotRegisteredError } from "../../federation/errors.ts";
import type { FederationRegistry } from "../../federation/registry-api.ts";

/**
 * Calls the key pairs dispatcher for an actor and gives the pairs their key
 * ids and vocabulary objects.
 * @param registry The registrations.
 * @param ctx The context to give the dispatcher.
 * @param identifier The actor's identifier.
 * @returns The key pairs.
 * @throws {RouteNotRegisteredError} Without a key pairs dispatcher.
 * @throws {TypeError} When the dispatcher returns something else than an
 *         array of key pairs.
 * @since 0.2.0
 */
export async function getActorKeyPairs<TContextData>(
  registry: FederationRegistry<TContextData>,
  ctx: Context<TContextData>,
  identifier: string,
): Promise<ActorKeyPair[]> {
  const dispatcher = registry.actor?.keyPairsDispatcher;
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
 * @since 0.2.0
 */
export class ActorKeyPairsCache<TContextData> {
  readonly #registry: FederationRegistry<TContextData>;
  readonly #ttlMs: number;
  readonly #limit: number;
  readonly #entries = new Map<string, { expires: number; pairs: Promise<ActorKeyPair[]> }>();

  /**
   * @param registry The registrations.
   * @param ttlMs How long pairs are kept, in milliseconds.
   * @param limit How many actors' pairs are kept at most.
   */
  constructor(registry: FederationRegistry<TContextData>, ttlMs = 60_000, limit = 1024) {
    this.#registry = registry;
    this.#ttlMs = ttlMs;
    this.#limit = limit;
  }

  /**
   * Returns an actor's key pairs, from the cache when fresh.
   * @param ctx The context to give the dispatcher on a miss.
   * @param identifier The actor's identifier.
   * @returns The key pairs.
   * @throws {RouteNotRegisteredError} Without a key pairs dispatcher.
   */
  get(ctx: Context<TContextData>, identifier: string): Promise<ActorKeyPair[]> {
    const key = `${ctx.canonicalOrigin}\n${identifier}`;
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry != null && entry.expires > now) return entry.pairs;
    const pairs = getActorKeyPairs(this.#registry, ctx, identifier);
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
