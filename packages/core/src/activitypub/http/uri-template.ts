import { UriBuildError, UriTemplateError } from "./errors.ts";

/**
 * One piece of a parsed URI template: literal text, or a `{name}`
 * expression.
 * @since 0.2.0
 */
export type UriTemplateToken =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "variable"; readonly name: string };

/**
 * A parsed URI template: the one representation both matching and building
 * use, so the two can never disagree.
 * @since 0.2.0
 */
export interface UriTemplate {
  /** The template as written, e.g. `/users/{identifier}/inbox`. */
  readonly template: string;
  readonly tokens: readonly UriTemplateToken[];
  /** The variables' names, in order. */
  readonly variables: readonly string[];
  /** Matches a path, capturing one group per variable. */
  readonly pattern: RegExp;
}

const VARIABLE_NAME = /^[A-Za-z0-9_]+$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Parses a path template made of literal text and RFC 6570 level-1
 * expressions (`{name}`), each standing for one non-empty path segment
 * part (no `/`).
 * @param template The template, starting with `/`.
 * @returns The parsed template.
 * @throws {UriTemplateError} When the template does not start with `/`,
 *         has an unbalanced brace, an operator (`{+x}`, `{?x}`, …), an
 *         invalid or repeated variable name, two adjacent expressions, or a
 *         `?` or `#`.
 * @since 0.2.0
 */
export function parseUriTemplate(template: string): UriTemplate {
  const fail = (why: string): never => {
    throw new UriTemplateError(
      template,
      `Invalid URI template ${JSON.stringify(template)}: ${why}`,
    );
  };
  if (!template.startsWith("/")) fail("a path template must start with /.");
  const tokens: UriTemplateToken[] = [];
  const variables: string[] = [];
  let position = 0;
  while (position < template.length) {
    const open = template.indexOf("{", position);
    const literal = template.slice(position, open < 0 ? undefined : open);
    if (literal.includes("}")) fail("a } has no matching {.");
    if (/[?#]/.test(literal)) fail("a path template cannot contain ? or #.");
    if (literal !== "") tokens.push({ kind: "literal", text: literal });
    if (open < 0) break;
    const close = template.indexOf("}", open);
    if (close < 0) fail("a { has no matching }.");
    const name = template.slice(open + 1, close);
    if (/^[+#./;?&=,!@|]/.test(name)) {
      fail(`only simple {name} expressions are supported, not {${name}}.`);
    }
    if (!VARIABLE_NAME.test(name)) {
      fail(`{${name}} is not a variable name (letters, digits and _).`);
    }
    if (variables.includes(name)) fail(`the variable {${name}} appears twice.`);
    const previous = tokens.at(-1);
    if (previous?.kind === "variable") {
      fail(
        `{${name}} directly follows {${previous.name}}, so a path could be split ` +
          "between them in several ways; put a literal between them.",
      );
    }
    tokens.push({ kind: "variable", name });
    variables.push(name);
    position = close + 1;
  }
  const source = tokens.map((token) =>
    token.kind === "literal" ? escapeRegExp(token.text) : "([^/]+)"
  ).join("");
  return { template, tokens, variables, pattern: new RegExp(`^${source}$`) };
}

/**
 * Matches a path (percent-encoded, as in `URL.pathname`) against a parsed
 * template.
 * @param template The parsed template.
 * @param path The path.
 * @returns The variables' decoded values, or `null` when it does not match.
 * @since 0.2.0
 */
export function matchUriTemplate(
  template: UriTemplate,
  path: string,
): Record<string, string> | null {
  const match = template.pattern.exec(path);
  if (match == null) return null;
  const values: Record<string, string> = {};
  try {
    template.variables.forEach((name, index) => {
      values[name] = decodeURIComponent(match[index + 1]);
    });
  } catch {
    return null; // A malformed percent-encoding.
  }
  return values;
}

/** RFC 6570 simple expansion: everything but unreserved characters is encoded. */
function encodeValue(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Builds a path from a parsed template and values for its variables; the
 * result matches the template again with the same values.
 * @param template The parsed template.
 * @param values A non-empty string for every variable.
 * @returns The path.
 * @throws {UriBuildError} When a value is missing or empty.
 * @since 0.2.0
 */
export function expandUriTemplate(
  template: UriTemplate,
  values: Readonly<Record<string, string>>,
): string {
  return template.tokens.map((token) => {
    if (token.kind === "literal") return token.text;
    const value = values[token.name];
    if (typeof value !== "string" || value === "") {
      throw new UriBuildError(
        `The template ${template.template} needs a non-empty value for {${token.name}}.`,
      );
    }
    return encodeValue(value);
  }).join("");
}

// For overlap detection a template is a sequence of units: one literal
// character, exactly one non-slash character, or any number of them (a
// variable is "one" followed by "any number").
type Unit = { readonly char: string } | "one" | "many";

function unitsOf(template: UriTemplate): Unit[] {
  return template.tokens.flatMap((token): Unit[] =>
    token.kind === "literal" ? [...token.text].map((char) => ({ char })) : ["one", "many"]
  );
}

/**
 * Finds a path both templates match, if any: a search over pairs of
 * positions in the two templates (the product of their automata).
 * @param a A parsed template.
 * @param b Another.
 * @returns A path both match, or `null` when none exists.
 * @since 0.2.0
 */
export function findCommonPath(a: UriTemplate, b: UriTemplate): string | null {
  const ua = unitsOf(a);
  const ub = unitsOf(b);
  const seen = new Set<string>();
  const queue: { i: number; j: number; path: string }[] = [{ i: 0, j: 0, path: "" }];
  while (queue.length > 0) {
    const { i, j, path } = queue.shift()!;
    const key = `${i},${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === ua.length && j === ub.length) return path;
    // A "many" may match nothing.
    if (ua[i] === "many") queue.push({ i: i + 1, j, path });
    if (ub[j] === "many") queue.push({ i, j: j + 1, path });
    if (i === ua.length || j === ub.length) continue;
    const x = ua[i];
    const y = ub[j];
    let char: string | null;
    if (typeof x === "object" && typeof y === "object") char = x.char === y.char ? x.char : null;
    else if (typeof x === "object") char = x.char === "/" ? null : x.char;
    else if (typeof y === "object") char = y.char === "/" ? null : y.char;
    else char = "x";
    if (char == null) continue;
    queue.push({ i: x === "many" ? i : i + 1, j: y === "many" ? j : j + 1, path: path + char });
  }
  return null;
}
