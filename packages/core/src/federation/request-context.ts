import {
  type Actor,
  CryptographicKey,
  isActor,
  Object as APObject,
  Tombstone,
} from "@fedify/vocab";
import type { PublicKeyFetcher } from "../activitypub/signatures/key-cache.ts";
import { verifyRequest } from "../activitypub/signatures/verify.ts";
import { type Context, type ContextHost, ContextImpl } from "./context.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import type { ObjectClass } from "./registry.ts";

/**
 * A context for one incoming request: what the actor, object and
 * collection dispatchers, the NodeInfo dispatcher and the authorization
 * predicates get.
 * @typeParam TContextData The type of the application data.
 * @since 0.2.0
 */
export interface RequestContext<TContextData> extends Context<TContextData> {
  /** The request. */
  readonly request: Request;
  /** The request's URL. */
  readonly url: URL;

  /**
   * Returns one of your actors, as the actor dispatcher makes it.
   * @param identifier The actor's identifier.
   * @returns The actor, or `null` when there is none (or it is a
   *          `Tombstone`).
   * @throws {RouteNotRegisteredError} Without an actor dispatcher.
   */
  getActor(identifier: string): Promise<Actor | null>;

  /**
   * Returns one of your objects, as its object dispatcher makes it.
   * @param cls The class, e.g. `Note`.
   * @param values The values of its path's variables.
   * @returns The object, or `null`.
   * @throws {RouteNotRegisteredError} Without an object dispatcher for the
   *         class.
   */
  getObject<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    values: Readonly<Record<string, string>>,
  ): Promise<TObject | null>;

  /**
   * Verifies the request's HTTP signature (either scheme), for authorized
   * fetch ("secure mode"): the key that signed it, or `null` when the
   * request is unsigned or the signature does not verify.  Computed once
   * per context.
   * @returns The key, with its owner.
   */
  getSignedKey(): Promise<CryptographicKey | null>;

  /**
   * The actor that owns the key that signed the request, fetched by the
   * document loader, or `null` when the request is not signed or the owner
   * cannot be loaded.
   * @returns The actor.
   */
  getSignedKeyOwner(): Promise<Actor | null>;
}

/**
 * What a {@link RequestContextImpl} needs besides a context's host.
 * Internal.
 * @since 0.2.0
 */
export interface RequestContextHost<TContextData> extends ContextHost<TContextData> {
  /** Fetches and caches public keys. */
  readonly fetchPublicKey: PublicKeyFetcher;
}

/**
 * The {@link RequestContext} implementation.  Internal.
 * @since 0.2.0
 */
export class RequestContextImpl<TContextData> extends ContextImpl<TContextData>
  implements RequestContext<TContextData> {
  readonly request: Request;
  readonly #host: RequestContextHost<TContextData>;
  #signedKey?: Promise<CryptographicKey | null>;
  #signedKeyOwner?: Promise<Actor | null>;

  /**
   * @param host The federation's internals.
   * @param request The request.
   * @param data The application data.
   */
  constructor(host: RequestContextHost<TContextData>, request: Request, data: TContextData) {
    super(host, new URL(request.url), data);
    this.#host = host;
    this.request = request;
  }

  async getActor(identifier: string): Promise<Actor | null> {
    const actor = this.#host.registry.actor;
    if (actor == null) throw new RouteNotRegisteredError("actor dispatcher", "setActorDispatcher");
    const found = await actor.dispatcher(this, identifier);
    return found instanceof Tombstone ? null : found;
  }

  async getObject<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    values: Readonly<Record<string, string>>,
  ): Promise<TObject | null> {
    const registration = this.#host.registry.objects.get(cls?.typeId?.href);
    if (registration == null) {
      throw new RouteNotRegisteredError(
        `object dispatcher for ${cls?.name ?? String(cls)}`,
        "setObjectDispatcher",
      );
    }
    return await registration.dispatcher(this, values) as TObject | null;
  }

  getSignedKey(): Promise<CryptographicKey | null> {
    this.#signedKey ??= (async () => {
      const { options } = this.#host;
      const result = await verifyRequest(this.request, {
        fetchKey: this.#host.fetchPublicKey,
        timeWindow: options.signatureTimeWindow,
        ...(options.origin == null ? {} : { origin: options.origin }),
      });
      if (!result.verified) return null;
      return new CryptographicKey({
        id: result.keyId,
        owner: result.key.owner,
        publicKey: result.key.publicKey,
      });
    })();
    return this.#signedKey;
  }

  getSignedKeyOwner(): Promise<Actor | null> {
    this.#signedKeyOwner ??= (async () => {
      const key = await this.getSignedKey();
      if (key?.ownerId == null) return null;
      try {
        const { document, documentUrl } = await this.documentLoader(key.ownerId.href);
        // Only the owner's origin speaks for the owner, whatever redirects.
        if (new URL(documentUrl).origin !== key.ownerId.origin) return null;
        const object = await APObject.fromJsonLd(document, {
          documentLoader: this.documentLoader,
          contextLoader: this.documentLoader,
        });
        return isActor(object) && object.id?.href === key.ownerId.href ? object : null;
      } catch {
        return null;
      }
    })();
    return this.#signedKeyOwner;
  }
}
