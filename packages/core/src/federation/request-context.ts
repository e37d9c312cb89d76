import {
  type Actor,
  CryptographicKey,
  isActor,
  Object as APObject,
  Tombstone,
} from "@fedify/vocab";
import { withDocumentLoadBudget } from "../activitypub/network/document-budget.ts";
import {
  createPublicKeyFetcher,
  type PublicKeyFetcher,
} from "../activitypub/signatures/key-cache.ts";
import { assertKnownOptions } from "../options/known-options.ts";
import { verifyRequest } from "../activitypub/signatures/verify.ts";
import { type ContextHost, ContextImpl } from "./context.ts";
import type { GetActorOptions, GetSignedKeyOptions, RequestContext } from "./context-api.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import type { ObjectClass } from "./registry-api.ts";

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

  override clone(data: TContextData): RequestContextImpl<TContextData> {
    return new RequestContextImpl(this.#host, this.request, data);
  }

  getActor(
    identifier: string,
    options?: GetActorOptions & { readonly tombstone?: "suppress" | undefined },
  ): Promise<Actor | null>;
  getActor(
    identifier: string,
    options: GetActorOptions & { readonly tombstone: "passthrough" },
  ): Promise<Actor | Tombstone | null>;
  getActor(identifier: string, options: GetActorOptions): Promise<Actor | Tombstone | null>;
  async getActor(
    identifier: string,
    options: GetActorOptions = {},
  ): Promise<Actor | Tombstone | null> {
    assertKnownOptions(options, ["tombstone"], { where: "getActor()" });
    const mode = options.tombstone ?? "suppress";
    if (mode !== "suppress" && mode !== "passthrough") {
      throw new TypeError(
        `The tombstone option of getActor() must be "suppress" or "passthrough"; got ${
          JSON.stringify(mode)
        }.`,
      );
    }
    const actor = this.#host.registry.actor;
    if (actor == null) throw new RouteNotRegisteredError("actor dispatcher", "setActorDispatcher");
    const found = await actor.dispatcher(this, identifier);
    return found instanceof Tombstone && mode === "suppress" ? null : found;
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

  getSignedKey(keyOptions: GetSignedKeyOptions = {}): Promise<CryptographicKey | null> {
    assertKnownOptions(keyOptions, ["documentLoader", "contextLoader", "tracerProvider"], {
      where: "getSignedKey()",
    });
    this.#signedKey ??= (async () => {
      const { options } = this.#host;
      const { documentLoader } = keyOptions;
      const result = await verifyRequest(this.request, {
        fetchKey: documentLoader == null
          ? this.#host.fetchPublicKey
          : createPublicKeyFetcher({ kv: options.kv, documentLoader }),
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
        const loader = withDocumentLoadBudget(
          this.documentLoader,
          this.#host.options.remoteDocuments.budget,
        );
        const object = await APObject.fromJsonLd(document, {
          documentLoader: loader,
          contextLoader: loader,
        });
        return isActor(object) && object.id?.href === key.ownerId.href ? object : null;
      } catch {
        return null;
      }
    })();
    return this.#signedKeyOwner;
  }
}
