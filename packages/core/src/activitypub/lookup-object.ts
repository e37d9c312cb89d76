import { type DocumentLoader, Object as APObject } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { type DocumentLoadBudget, withDocumentLoadBudget } from "./network/document-budget.ts";
import { assertWithinDocumentLimits } from "./network/document-complexity.ts";
import {
  lookupWebFinger,
  type LookupWebFingerOptions,
  parseFediverseHandle,
} from "./webfinger/lookup.ts";

const logger = getLogger(["fedwork", "federation", "lookup"]);

/**
 * What {@link lookupObject} fetches with.
 * @since 0.3.0
 */
export interface LookupObjectOptions {
  /** Loads the object's document. */
  readonly documentLoader: DocumentLoader;
  /** Loads the JSON-LD contexts the document refers to. */
  readonly contextLoader: DocumentLoader;
  /** The user agent, address policy and limits of a handle's WebFinger lookup. */
  readonly webFinger: LookupWebFingerOptions;
  /**
   * The document limits the object's document is held to before it is
   * parsed, and the budget of what parsing it may load.
   * @default the default limits, 8 loads within 10 seconds
   * @since 0.4.0
   */
  readonly budget?: DocumentLoadBudget;
}

/**
 * Fetches an ActivityStreams object by its URI, or an actor by its
 * fediverse handle (`@user@host`, `user@host` or `acct:user@host`,
 * resolved through WebFinger).  An object whose id is on another origin
 * than the document it came from is refused.  Implements
 * `Context.lookupObject()`.
 * @param identifier The URI or handle.
 * @param options The loaders and the WebFinger lookup's options.
 * @returns The object, or `null` when it cannot be found or parsed (the
 *          reason is logged at debug level).
 * @since 0.3.0
 */
export async function lookupObject(
  identifier: string | URL,
  options: LookupObjectOptions,
): Promise<APObject | null> {
  const { documentLoader, contextLoader } = options;
  let url: URL | null = null;
  const text = identifier instanceof URL ? null : identifier.trim();
  const handle = text == null || (/^https?:/i.test(text)) ? null : parseFediverseHandle(text);
  try {
    if (identifier instanceof URL) url = identifier;
    else if (handle != null) {
      const jrd = await lookupWebFinger(`acct:${handle.user}@${handle.host}`, options.webFinger);
      const self = jrd?.links?.find((link) =>
        link.rel === "self" && link.href != null &&
        (link.type === "application/activity+json" ||
          link.type?.startsWith("application/ld+json"))
      );
      if (self?.href == null) {
        logger.debug("lookupObject({identifier}): no ActivityPub link in WebFinger.", {
          identifier: String(identifier),
        });
        return null;
      }
      url = new URL(self.href);
    } else if (text != null && URL.canParse(text)) url = new URL(text);
    if (url == null) {
      logger.debug("lookupObject({identifier}): neither a URL nor a handle.", {
        identifier: String(identifier),
      });
      return null;
    }
    const { document, documentUrl } = await documentLoader(url.href);
    // Whatever loader the caller gave, the document is held to the limits
    // before any JSON-LD work.
    assertWithinDocumentLimits(document, options.budget?.limits, url.href);
    const object = await APObject.fromJsonLd(document, {
      documentLoader: withDocumentLoadBudget(documentLoader, options.budget),
      contextLoader: withDocumentLoadBudget(contextLoader, options.budget),
    });
    // A server may only speak for its own objects.
    if (object.id != null && object.id.origin !== new URL(documentUrl).origin) {
      logger.debug(
        "lookupObject({identifier}): {documentUrl} served {id}, another origin.",
        {
          identifier: String(identifier),
          documentUrl,
          id: object.id.href,
        },
      );
      return null;
    }
    return object;
  } catch (error) {
    // A remote party's failure, or a refused address: why, without a
    // stack trace.
    logger.debug("lookupObject({identifier}) failed: {reason}", {
      identifier: String(identifier),
      reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
    return null;
  }
}
