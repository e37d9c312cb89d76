import type { DocumentLoader, RemoteDocument } from "@fedify/vocab";
import { TaskPayloadDecodingError, TaskPayloadLoadError } from "../errors.ts";
import { rebuildVocabularyObject, type VocabularyClass } from "./vocabulary.ts";

/** The loaders vocabulary objects are rebuilt with. */
export interface Loaders {
  readonly documentLoader: DocumentLoader;
  readonly contextLoader: DocumentLoader;
}

/**
 * Stands in for a vocabulary object until its JSON-LD is rebuilt, which is
 * asynchronous, while the rest of the payload is rebuilt synchronously.
 */
export class VocabularyPlaceholder {
  readonly cls: VocabularyClass;
  readonly className: string;
  readonly jsonLd: unknown;
  value: unknown;
  constructor(cls: VocabularyClass, className: string, jsonLd: unknown) {
    this.cls = cls;
    this.className = className;
    this.jsonLd = jsonLd;
  }
}

/**
 * The placeholders of one payload and where the decoder put them, so that
 * the rebuilt objects replace them without walking the payload again.
 */
export class Placeholders {
  readonly list: VocabularyPlaceholder[] = [];
  // Object and array slots: container, key, container, key, …
  readonly #slots: unknown[] = [];
  // Maps and sets, whose order only a rebuild keeps.
  readonly #collections = new Set<Map<unknown, unknown> | Set<unknown>>();

  /** Creates a placeholder for one vocabulary object entry. */
  create(cls: VocabularyClass, className: string, jsonLd: unknown): VocabularyPlaceholder {
    const placeholder = new VocabularyPlaceholder(cls, className, jsonLd);
    this.list.push(placeholder);
    return placeholder;
  }

  /** Notes that `container[key]` holds a placeholder. */
  placedAt(container: object, key: string | number): void {
    this.#slots.push(container, key);
  }

  /** Notes that a map or set holds a placeholder. */
  placedIn(collection: Map<unknown, unknown> | Set<unknown>): void {
    this.#collections.add(collection);
  }

  /**
   * Rebuilds the vocabulary objects and puts them where their placeholders
   * are.
   * @param root The payload, which may itself be a placeholder.
   * @param loaders The loaders to rebuild with.
   * @returns The payload, with the placeholders replaced.
   * @throws {TaskPayloadLoadError} When a loader failed.
   * @throws {TaskPayloadDecodingError} When a vocabulary object cannot be
   *         rebuilt from its JSON-LD for another reason.
   */
  async rebuild(root: unknown, loaders: Loaders): Promise<unknown> {
    const failures: { url: string; error: unknown }[] = [];
    const fail = (url: string, error: unknown): never => {
      failures.push({ url, error });
      throw error;
    };
    // Not an async function: jsonld calls the loaders for every context of
    // every document, and each extra await would cost a microtask turn.
    const watch = (loader: DocumentLoader): DocumentLoader => (url, options) => {
      let loading: Promise<RemoteDocument>;
      try {
        loading = loader(url, options);
      } catch (error) {
        fail(url, error);
      }
      return loading!.catch((error: unknown) => fail(url, error));
    };
    const watched = {
      documentLoader: watch(loaders.documentLoader),
      contextLoader: watch(loaders.contextLoader),
    };
    const results = await Promise.allSettled(
      this.list.map((placeholder) =>
        rebuildVocabularyObject(placeholder.cls, placeholder.jsonLd, watched)
      ),
    );
    for (let i = 0; i < results.length; i++) {
      const result = results[i];
      if (result.status === "fulfilled") {
        this.list[i].value = result.value;
        continue;
      }
      // A loader failure is transient as far as the codec can tell (the
      // network, a cache): the message is worth another attempt, unlike a
      // document that cannot be rebuilt.
      if (failures.length > 0) {
        throw new TaskPayloadLoadError(failures[0].url, { cause: failures[0].error });
      }
      const error = result.reason;
      throw new TaskPayloadDecodingError(
        `the ${this.list[i].className} object could not be rebuilt from its JSON-LD: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    const slots = this.#slots;
    for (let i = 0; i < slots.length; i += 2) {
      const container = slots[i] as Record<string | number, unknown>;
      const key = slots[i + 1] as string | number;
      container[key] = (container[key] as VocabularyPlaceholder).value;
    }
    for (const collection of this.#collections) {
      if (collection instanceof Map) {
        const entries = [...collection];
        collection.clear();
        for (const [key, value] of entries) collection.set(resolve(key), resolve(value));
      } else {
        const members = [...collection];
        collection.clear();
        for (const member of members) collection.add(resolve(member));
      }
    }
    return resolve(root);
  }
}

function resolve(value: unknown): unknown {
  return value instanceof VocabularyPlaceholder ? value.value : value;
}
