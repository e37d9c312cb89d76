import {
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  type DocumentComplexityLimits,
  type ResolvedDocumentComplexityLimits,
  resolveDocumentComplexityLimits,
} from "./document-complexity.ts";
import {
  DEFAULT_DOCUMENT_LOAD_TIMEOUT_MS,
  DEFAULT_MAX_DOCUMENT_LOADS,
  type DocumentLoadBudget,
} from "./document-budget.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
import type { DurationInput } from "../../time/duration.ts";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { assertKnownOptions, UnknownOptionError } from "../../options/known-options.ts";

/**
 * The `remoteDocuments` option of a federation: what every document another
 * server sends or serves (inbox activities, actors, keys, objects,
 * collection pages, JSON-LD contexts) is held to before any JSON-LD
 * processing, and what parsing one of them may load.  See the manual's
 * security page for each limit, its default and what it bounds.
 * @since 0.4.0
 */
export interface FederationRemoteDocumentOptions extends DocumentComplexityLimits {
  /**
   * How many remote documents (JSON-LD contexts, embedded references)
   * parsing one document may load.
   * @default 8
   */
  readonly maxLoads?: number;
  /**
   * How long those loads may take together.
   * @default 10 seconds
   */
  readonly loadTimeout?: DurationInput;
}

/**
 * {@link FederationRemoteDocumentOptions}, checked.
 * @since 0.4.0
 */
export interface ResolvedRemoteDocumentOptions {
  /** The limits every document is checked against. */
  readonly limits: ResolvedDocumentComplexityLimits;
  /** The budget of one document's loads (without a signal). */
  readonly budget: Required<Omit<DocumentLoadBudget, "signal">>;
}

const BUDGET_NAMES = ["maxLoads", "loadTimeout"] as const;

/**
 * Checks the `remoteDocuments` option and fills in its defaults.
 * @param options The option's value.
 * @returns The resolved limits and load budget.
 * @throws {FederationOptionError} When a limit is invalid or unknown; the
 *         message names it (e.g. `remoteDocuments.maxValues`).
 * @since 0.4.0
 */
export function resolveRemoteDocumentOptions(
  options: FederationRemoteDocumentOptions | undefined,
): ResolvedRemoteDocumentOptions {
  if (options != null && typeof options !== "object") {
    throw new FederationOptionError(
      "remoteDocuments",
      "The remoteDocuments option must be an object such as { maxValues: 5000 }.",
    );
  }
  const { maxLoads, loadTimeout, ...limits } = options ?? {};
  try {
    if (options != null) {
      assertKnownOptions(options, [
        ...BUDGET_NAMES,
        ...Object.keys(DEFAULT_DOCUMENT_COMPLEXITY_LIMITS),
      ], { prefix: "remoteDocuments." });
    }
    const resolved = resolveDocumentComplexityLimits(limits, "remoteDocuments");
    return {
      limits: resolved,
      budget: {
        limits: resolved,
        maxLoads: positiveIntegerOption(
          maxLoads,
          "remoteDocuments.maxLoads",
          DEFAULT_MAX_DOCUMENT_LOADS,
        ),
        timeoutMs: positiveDurationOption(
          loadTimeout ?? undefined,
          "remoteDocuments.loadTimeout",
          DEFAULT_DOCUMENT_LOAD_TIMEOUT_MS,
        ),
      },
    };
  } catch (error) {
    if (error instanceof FederationOptionError || error instanceof UnknownOptionError) throw error;
    const name = /The (remoteDocuments\.\w+) option/.exec((error as Error).message)?.[1];
    throw new FederationOptionError(name ?? "remoteDocuments", (error as Error).message);
  }
}
