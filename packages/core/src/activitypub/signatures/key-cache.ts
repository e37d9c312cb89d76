import type { DocumentLoader } from "@fedify/vocab";
import { importMultibaseKey, importPem } from "@fedify/vocab-runtime";
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { loadWithoutStoring } from "../network/kv-cache.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
// A remote server's bad key is the sender's problem, and common: it is
// logged at the debug level with its message only (messageOf), never a
// stack trace.
import { asArray, idOf, messageOf } from "../json-values.ts";

const logger = getLogger(["fedwork", "activitypub", "signatures"]);

/**
 * A public key fetched (or read from the cache) for verifying a signature.
 * @since 0.2.0
 */
export interface FetchedPublicKey {
  /** The key's id, e.g. `https://example.com/users/alice#main-key`. */
  readonly keyId: URL;
  /** The imported key. */
  readonly publicKey: CryptoKey;
  /**
   * The actor that owns the key, or `null` when the key document names no
   * owner that could be confirmed.  An owner on another origin than the key
   * is trusted only when its own document lists the key.
   */
  readonly owner: URL | null;
  /** Whether the key came from the cache (and so may be stale). */
  readonly cached: boolean;
}

/**
 * Fetches the public key a signature names.  With `refresh: true`, the
 * cache is bypassed and refilled (a verifier does this once when a cached
 * key fails, in case the key was rotated).
 * @param keyId The key id.
 * @param options Whether to bypass the cache.
 * @returns The key, or `null` when it cannot be fetched or found.
 * @since 0.2.0
 */
export type PublicKeyFetcher = (
  keyId: URL,
  options?: { readonly refresh?: boolean },
) => Promise<FetchedPublicKey | null>;

/**
 * Options for {@link createPublicKeyFetcher}.
 * @since 0.2.0
 */
export interface PublicKeyFetcherOptions {
  /** Loads the key document (the key id without its fragment).  Required. */
  readonly documentLoader: DocumentLoader;
  /** Where fetched keys are cached.  Required. */
  readonly kv: KvStore;
  /**
   * How long a fetched key is cached.
   * @default `{ hours: 1 }`
   */
  readonly ttl?: DurationInput;
  /**
   * How soon after a key was fetched a `refresh` may fetch it again (to see
   * whether it was rotated); earlier refreshes return `null`, so a forged
   * signature naming someone's cached key cannot make every request refetch
   * that key.
   * @default `{ minutes: 1 }`
   * @since 0.3.0
   */
  readonly refreshCooldown?: DurationInput;
  /**
   * The prefix of the cache's keys; the key id is appended.
   * @default `["fedwork", "public-key"]`
   */
  readonly kvPrefix?: KvKey;
}

/** What the KV store keeps per key id: the key's material and its owner. */
interface StoredPublicKey {
  /** When the key document was fetched (epoch ms); absent in old entries. */
  readonly fetchedAt?: number;
  readonly owner: string | null;
  readonly publicKeyPem?: string;
  readonly publicKeyMultibase?: string;
}

// Imported CryptoKeys, by key material.  Importing costs about as much as
// verifying a signature, and the material is what the KV store returns, so a
// process-wide map serves every fetcher.  Bounded, least recently used out.
const IMPORTED_KEYS_LIMIT = 1024;
const importedKeys = new Map<string, Promise<CryptoKey>>();

function importStoredKey(stored: StoredPublicKey): Promise<CryptoKey> {
  const material = stored.publicKeyPem ?? stored.publicKeyMultibase ?? "";
  let imported = importedKeys.get(material);
  if (imported != null) {
    importedKeys.delete(material);
  } else {
    imported = stored.publicKeyPem != null
      ? importPem(stored.publicKeyPem)
      : importMultibaseKey(material);
    imported.catch(() => importedKeys.delete(material));
  }
  importedKeys.set(material, imported);
  if (importedKeys.size > IMPORTED_KEYS_LIMIT) {
    importedKeys.delete(importedKeys.keys().next().value!);
  }
  return imported;
}

function sameUrl(a: string | null, b: URL): boolean {
  if (a == null) return false;
  try {
    return new URL(a).href === b.href;
  } catch {
    return false;
  }
}

// What the KV store keeps per key id is bounded, since anyone can make a
// server fetch and keep a key by naming a new key id: an RSA key of 16,384
// bits takes under 3 KiB of PEM, and a real owner's id is far shorter than
// 2 KiB.  A longer key is refused; a longer owner is not believed.
const MAX_KEY_MATERIAL_LENGTH = 8 * 1024;
const MAX_OWNER_LENGTH = 2048;

// Key documents are read as the compact JSON every implementation we know
// (Mastodon, Misskey, Pleroma, GoToSocial, Fedify) publishes, rather than by
// JSON-LD expansion: the key is the document itself, or is embedded in its
// publicKey or assertionMethod.
function findKey(document: unknown, keyId: URL): StoredPublicKey | null {
  if (typeof document !== "object" || document == null) return null;
  const record = document as Record<string, unknown>;
  const candidates = [
    record,
    ...asArray(record.publicKey),
    ...asArray(record.assertionMethod),
  ];
  for (const candidate of candidates) {
    if (typeof candidate !== "object" || candidate == null) continue;
    const key = candidate as Record<string, unknown>;
    if (!sameUrl(idOf(key), keyId)) continue;
    let owner = idOf(key.owner) ?? idOf(key.controller) ??
      (key === record ? null : idOf(record));
    if (owner != null && owner.length > MAX_OWNER_LENGTH) owner = null;
    for (const name of ["publicKeyPem", "publicKeyMultibase"] as const) {
      const material = key[name];
      if (typeof material !== "string") continue;
      if (material.length > MAX_KEY_MATERIAL_LENGTH) {
        logger.debug("The key {keyId} is {length} characters long; refusing it.", {
          keyId: keyId.href,
          length: material.length,
        });
        return null;
      }
      return { owner, [name]: material };
    }
  }
  return null;
}

function listsKey(document: unknown, keyId: URL): boolean {
  if (typeof document !== "object" || document == null) return false;
  const record = document as Record<string, unknown>;
  return [...asArray(record.publicKey), ...asArray(record.assertionMethod)].some((entry) =>
    sameUrl(idOf(entry), keyId)
  );
}

function parseOwner(owner: string | null): URL | null {
  if (owner == null) return null;
  try {
    return new URL(owner);
  } catch {
    return null;
  }
}

/**
 * Creates a {@link PublicKeyFetcher} that loads the key document at the key
 * id without its fragment, finds the key in it (the document itself, or an
 * entry of its `publicKey` or `assertionMethod`), caches the key's material
 * and owner in the KV store, and keeps the imported `CryptoKey`s in memory.
 * An owner on another origin than the key is fetched too, and kept only if
 * it lists the key.  Since 0.4.0, the documents it fetches are not stored
 * by a `kvCache()` in the loader (a cached copy is still used), a key past
 * 8 KiB of PEM or multibase is refused and an owner id past 2 KiB is not
 * believed, so that a stranger naming new key ids stores at most a few
 * KiB per key.
 * @param options The document loader, the KV store and the cache's TTL.
 * @returns The fetcher.
 * @throws {TypeError} When `ttl` is not a duration.
 * @since 0.2.0
 * @example
 * ```ts
 * import { createFetchDocumentLoader, createPublicKeyFetcher, MemoryKvStore } from "@fedwork/core";
 *
 * const fetchKey = createPublicKeyFetcher({
 *   kv: new MemoryKvStore(),
 *   documentLoader: createFetchDocumentLoader({
 *     userAgent: "MyApp/1.0",
 *     allowPrivateAddress: false,
 *   }),
 * });
 * const key = await fetchKey(new URL("https://mastodon.example/users/alice#main-key"));
 * ```
 */
export function createPublicKeyFetcher(options: PublicKeyFetcherOptions): PublicKeyFetcher {
  const { documentLoader, kv } = options;
  const ttlMs = durationToMilliseconds(options.ttl ?? { hours: 1 }, "ttl");
  const prefix = options.kvPrefix ?? ["fedwork", "public-key"];
  const cooldownMs = durationToMilliseconds(
    options.refreshCooldown ?? { minutes: 1 },
    "refreshCooldown",
  );
  return async (keyId, fetchOptions) => {
    const cacheKey: KvKey = [...prefix, keyId.href];
    if (fetchOptions?.refresh) {
      // A forged signature naming someone's cached key would otherwise make
      // every request refetch that key.
      const stored = await kv.get<StoredPublicKey>(cacheKey);
      const age = Date.now() - (stored?.fetchedAt ?? 0);
      if (age >= 0 && age < cooldownMs) {
        logger.debug("Not refetching {keyId}: it was fetched {age} ms ago.", {
          keyId: keyId.href,
          age,
        });
        return null;
      }
    } else {
      const stored = await kv.get<StoredPublicKey>(cacheKey);
      if (stored != null) {
        try {
          return {
            keyId,
            publicKey: await importStoredKey(stored),
            owner: parseOwner(stored.owner),
            cached: true,
          };
        } catch {
          // A corrupt entry is refetched below.
        }
      }
    }
    const documentUrl = new URL(keyId);
    documentUrl.hash = "";
    let stored: StoredPublicKey | null;
    let servedFrom: string;
    try {
      // Not stored by a kvCache() in the loader: this document is fetched
      // for whoever names a key id, before anything is verified, and only
      // the key's material and owner are kept (below).
      const loaded = await loadWithoutStoring(documentLoader, documentUrl.href);
      stored = findKey(loaded.document, keyId);
      servedFrom = new URL(loaded.documentUrl).origin;
    } catch (error) {
      logger.debug("Failed to fetch the key document of {keyId}: {message}", {
        keyId: keyId.href,
        message: messageOf(error),
      });
      return null;
    }
    if (stored == null) {
      logger.debug("The key document of {keyId} does not contain the key.", { keyId: keyId.href });
      return null;
    }
    if (servedFrom !== keyId.origin) {
      // Only the key id's origin speaks for its keys: a document that came
      // from elsewhere (an open redirect, a user-uploaded file) is ignored.
      logger.debug("The key document of {keyId} came from {servedFrom}, another origin.", {
        keyId: keyId.href,
        servedFrom,
      });
      return null;
    }
    const owner = parseOwner(stored.owner);
    if (owner != null && owner.origin !== servedFrom) {
      // Anyone can publish a key claiming someone else as its owner: believe
      // the claim only when the owner lists the key.
      let confirmed = false;
      try {
        const loaded = await loadWithoutStoring(documentLoader, owner.href);
        // The owner's document must come from the owner's own origin.
        confirmed = new URL(loaded.documentUrl).origin === owner.origin &&
          listsKey(loaded.document, keyId);
      } catch (error) {
        logger.debug("Failed to fetch {owner}, the claimed owner of {keyId}: {message}", {
          owner: owner.href,
          keyId: keyId.href,
          message: messageOf(error),
        });
      }
      if (!confirmed) stored = { ...stored, owner: null };
    }
    let publicKey: CryptoKey;
    try {
      publicKey = await importStoredKey(stored);
    } catch (error) {
      logger.debug("Cannot import the key {keyId}: {message}", {
        keyId: keyId.href,
        message: messageOf(error),
      });
      return null;
    }
    await kv.set(cacheKey, { ...stored, fetchedAt: Date.now() }, {
      ttl: { milliseconds: ttlMs },
    });
    return { keyId, publicKey, owner: parseOwner(stored.owner), cached: false };
  };
}

/**
 * Tells whether a verified key's owner is the `actor` of an activity, as an
 * inbox must check before trusting a signed activity (otherwise anyone
 * could sign activities on anyone's behalf).
 * @param activity The activity, as parsed JSON.
 * @param key The key that verified its request.
 * @returns `true` when the activity has exactly one actor and the key's
 *          confirmed owner is that actor.
 * @since 0.2.0
 */
export function doesKeyOwnerMatchActor(activity: unknown, key: FetchedPublicKey): boolean {
  if (key.owner == null || typeof activity !== "object" || activity == null) return false;
  const actors = asArray((activity as Record<string, unknown>).actor);
  if (actors.length !== 1) return false;
  return sameUrl(idOf(actors[0]), key.owner);
}
