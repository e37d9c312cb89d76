import { type BuiltinKind, builtinKindOf } from "./builtins.ts";
import { recogniseVocabulary } from "./vocabulary.ts";

/** What the encoder knows about a prototype it has met before. */
export type Classification =
  | { readonly kind: "builtin"; readonly builtin: BuiltinKind }
  | { readonly kind: "plain" }
  | { readonly kind: "vocabulary"; readonly className: string }
  | { readonly kind: "refused"; readonly reason: string }
  | { readonly kind: "other"; readonly name: string };

const classifications = new WeakMap<object, Classification>();
const PLAIN: Classification = { kind: "plain" };

/**
 * Decides what the encoder does with objects that have the given
 * prototype, once per prototype.
 */
export function classify(proto: object): Classification {
  let classification = classifications.get(proto);
  if (classification == null) {
    classification = classifyUncached(proto);
    classifications.set(proto, classification);
  }
  return classification;
}

function classifyUncached(proto: object): Classification {
  const builtin = builtinKindOf(proto);
  if (builtin != null) return { kind: "builtin", builtin };
  const vocabulary = recogniseVocabulary(proto);
  if (vocabulary != null) {
    return "refused" in vocabulary
      ? { kind: "refused", reason: vocabulary.refused }
      : { kind: "vocabulary", className: vocabulary.className };
  }
  // An Object.prototype from another realm, or an object made with
  // Object.create(Object.create(null)): plain, as devalue judges it.
  if (Object.getPrototypeOf(proto) === null) return PLAIN;
  const constructor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  const name = typeof constructor === "function" && typeof constructor.name === "string"
    ? constructor.name
    : "";
  return { kind: "other", name };
}
