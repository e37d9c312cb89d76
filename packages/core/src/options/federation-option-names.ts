/**
 * Options Fedify's `createFederation()` takes that Fedwork does not, with
 * what to do instead: the `hints` of the federation's unknown-option
 * check, so that a Fedify app moved to Fedwork gets this advice instead of
 * a bare "unknown option".  A name Fedwork supports (as it does
 * `inboxChallengePolicy` since 0.4.0) must not be listed: it is a known
 * option, so its hint could never be given.
 * @since 0.4.0
 */
export const FEDIFY_ONLY_OPTION_HINTS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries({
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
    circuitBreaker: "remove it; outboxRetryPolicy bounds the retries of a failing inbox.",
    activityTransformers: "transform the activity before calling sendActivity(); remove it.",
    trailingSlashInsensitive: "remove it.",
  }).map((
    [name, advice],
  ) => [name, `it is one of Fedify's that Fedwork does not support; ${advice}`]),
);
