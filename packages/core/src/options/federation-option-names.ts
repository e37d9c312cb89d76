import { findUnknownOption, unknownOptionMessage } from "./known-options.ts";
import { FederationOptionError } from "./federation-option-error.ts";

/**
 * Options Fedify's `createFederation()` takes that Fedwork does not, with
 * what to do instead.  A Fedify app moved to Fedwork gets this advice
 * instead of a bare "unknown option".
 */
const FEDIFY_ONLY_OPTIONS: Readonly<Record<string, string>> = {
  kvPrefixes: 'Fedwork keys its records under ["fedwork", …] in the KvStore; remove it.',
  authenticatedDocumentLoaderFactory:
    "Fedwork makes signed document requests itself: use ctx.getDocumentLoader({ identifier }); " +
    "remove it.",
  benchmarkMode: "remove it.",
  // Fedwork loads JSON-LD contexts with its document loader.
  contextLoaderFactory:
    "Fedwork loads JSON-LD contexts with its document loader (the well-known contexts are " +
    "bundled, so they need no request); remove it, and pass documentLoaderFactory or " +
    "documentLoader to change how both are loaded.",
  onOutboxError:
    'listen to failed deliveries with federation.on("failed", listener) instead; see ' +
    '"What happens to a message" in the manual.',
  inboxChallengePolicy: "remove it.",
  circuitBreaker: "remove it; outboxRetryPolicy bounds the retries of a failing inbox.",
  activityTransformers: "transform the activity before calling sendActivity(); remove it.",
  trailingSlashInsensitive: "remove it.",
};

/**
 * Throws a {@link FederationOptionError} for the first option that is not
 * in `known`: naming it, saying what to do when it is one of Fedify's, and
 * suggesting the closest known name ("did you mean …?") for a typo, with
 * the wording every options check in Fedwork uses.  Options whose value is
 * `undefined` count as absent.
 * @param options The options object as the user passed it.
 * @param known The option names Fedwork knows.
 * @param prefix The path of a nested options object, e.g.
 *               `"remoteRequests."`, put before the names in messages.
 * @throws {FederationOptionError} On the first unknown option.
 * @since 0.2.0
 */
export function assertKnownOptions(options: object, known: readonly string[], prefix = ""): void {
  const key = findUnknownOption(options, known);
  if (key === undefined) return;
  const name = prefix + key;
  if (prefix === "" && Object.hasOwn(FEDIFY_ONLY_OPTIONS, name)) {
    throw new FederationOptionError(
      name,
      `The ${name} option is one of Fedify's that Fedwork does not support: ` +
        FEDIFY_ONLY_OPTIONS[name],
    );
  }
  throw new FederationOptionError(name, unknownOptionMessage(key, known, { prefix }));
}
