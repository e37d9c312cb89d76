import { RouteConflictError, UriBuildError } from "./errors.ts";
import {
  expandUriTemplate,
  findCommonPath,
  matchUriTemplate,
  parseUriTemplate,
  type UriTemplate,
} from "./uri-template.ts";

/**
 * A route a path matched.
 * @since 0.2.0
 */
export interface RouteMatch {
  /** The route's name, as given to {@link Router.add}. */
  readonly name: string;
  /** The route's template. */
  readonly template: string;
  /** The decoded values of the template's variables. */
  readonly values: Readonly<Record<string, string>>;
}

/**
 * Maps paths to named routes and builds paths from route names, both from
 * one parsed URI template per route (RFC 6570 level 1: `{name}` stands for
 * a non-empty part of one path segment).  Templates that could match the
 * same path are refused when added, so a path never matches two routes and
 * the order of registration never matters.
 * @since 0.2.0
 * @example
 * ```ts
 * import { Router } from "./router.ts";
 *
 * const router = new Router();
 * router.add("/users/{identifier}", "actor");
 * router.add("/users/{identifier}/inbox", "inbox");
 * router.route("/users/alice/inbox"); // { name: "inbox", values: { identifier: "alice" }, … }
 * router.build("actor", { identifier: "alice" }); // "/users/alice"
 * ```
 */
export class Router {
  readonly #routes = new Map<string, UriTemplate>();

  /**
   * Adds a route.
   * @param template The path template, e.g. `/users/{identifier}`.
   * @param name The route's name, e.g. `"actor"`.
   * @throws {UriTemplateError} When the template is malformed.
   * @throws {RouteConflictError} When the name is taken, or a route already
   *         there could match a path this one matches.
   */
  add(template: string, name: string): void {
    const parsed = parseUriTemplate(template);
    const taken = this.#routes.get(name);
    if (taken != null) {
      throw new RouteConflictError(
        template,
        taken.template,
        `A route named ${JSON.stringify(name)} already exists (${taken.template}); ` +
          "give each route its own name.",
      );
    }
    for (const [otherName, other] of this.#routes) {
      const path = findCommonPath(parsed, other);
      if (path == null) continue;
      throw new RouteConflictError(
        template,
        other.template,
        `The route ${template} (${name}) is ambiguous with ${other.template} ` +
          `(${otherName}): both match ${path}.  Make their literal parts differ.`,
      );
    }
    this.#routes.set(name, parsed);
  }

  /**
   * Tells whether a route of that name exists.
   * @param name The route's name.
   * @returns `true` if it was added.
   */
  has(name: string): boolean {
    return this.#routes.has(name);
  }

  /**
   * Finds the route a URL's path matches (its query and fragment are
   * ignored).
   * @param url A path (`/users/alice`) or a URL.
   * @returns The match, or `null` when no route matches.
   */
  route(url: string | URL): RouteMatch | null {
    const path = typeof url === "string" && url.startsWith("/")
      ? url.replace(/[?#].*$/s, "")
      : new URL(url).pathname;
    for (const [name, template] of this.#routes) {
      const values = matchUriTemplate(template, path);
      if (values != null) return { name, template: template.template, values };
    }
    return null;
  }

  /**
   * Builds the path of a route from values for its variables.
   * @param name The route's name.
   * @param values A non-empty string for each variable.
   * @returns The path, percent-encoded, which {@link route} maps back to
   *          the same values.
   * @throws {UriBuildError} When the route is unknown or a value is missing.
   */
  build(name: string, values: Readonly<Record<string, string>>): string {
    const template = this.#routes.get(name);
    if (template == null) throw new UriBuildError(`No route is named ${JSON.stringify(name)}.`);
    return expandUriTemplate(template, values);
  }
}
