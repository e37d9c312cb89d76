import { type RouteMatch, Router } from "./router.ts";
import { RoutePathError, UriTemplateError } from "./errors.ts";

/**
 * The paths Fedwork serves whatever is registered.
 * @since 0.2.0
 */
export const WELL_KNOWN_ROUTES = {
  webfinger: "/.well-known/webfinger",
  nodeinfoWellKnown: "/.well-known/nodeinfo",
} as const;

/**
 * The prefix of the route names of actor aliases: `actorAlias:<identifier>`.
 * Internal.
 * @since 0.4.0
 */
export const ACTOR_ALIAS_PREFIX = "actorAlias:";

/**
 * The federation's routes: one {@link Router} that both maps request paths
 * to registrations (`federation.fetch()`) and builds their URIs
 * (`ctx.getActorUri()` and the others), so the two can never disagree.
 * Route names are `actor`, `inbox`, `sharedInbox`, `outbox`, `followers`,
 * `following`, `nodeinfo` and `object:<type URI>`; the well-known paths are
 * always there.  Internal.
 * @since 0.2.0
 */
export class RouteTable {
  readonly #templates = new Map<string, string>();
  #router = new Router();

  constructor() {
    for (const [name, path] of Object.entries(WELL_KNOWN_ROUTES)) this.#add(name, path);
  }

  /**
   * Adds a route.
   * @param name The route's name.
   * @param path Its path template.
   * @param method The registration method, for error messages.
   * @throws {RoutePathError} When the template is malformed.
   * @throws {RouteConflictError} When it could match a path another route
   *         matches.
   */
  add(name: string, path: string, method: string): void {
    try {
      this.#add(name, path);
    } catch (error) {
      if (error instanceof UriTemplateError) {
        throw new RoutePathError(path, `${error.message} (given to ${method}())`);
      }
      throw error;
    }
  }

  #add(name: string, path: string): void {
    this.#router.add(path, name);
    this.#templates.set(name, path);
  }

  /**
   * Tells whether a route is registered.
   * @param name The route's name.
   * @returns Whether it is.
   */
  has(name: string): boolean {
    return this.#templates.has(name);
  }

  /**
   * The template of a route.
   * @param name The route's name.
   * @returns The template, or `undefined`.
   */
  template(name: string): string | undefined {
    return this.#templates.get(name);
  }

  /**
   * Finds the route a path matches.
   * @param path The request's path.
   * @returns The match, or `null`.
   */
  route(path: string): RouteMatch | null {
    const match = this.#router.route(path);
    // An actor alias (`mapActorAlias()`) is the actor route for one
    // identifier, to every reader of the table.
    if (match?.name.startsWith(ACTOR_ALIAS_PREFIX)) {
      return {
        name: "actor",
        template: match.template,
        values: { identifier: match.name.slice(ACTOR_ALIAS_PREFIX.length) },
      };
    }
    return match;
  }

  /**
   * Builds a route's path.
   * @param name The route's name.
   * @param values The values of its variables.
   * @returns The percent-encoded path.
   * @throws {UriBuildError} When a value is missing or empty.
   */
  build(name: string, values: Readonly<Record<string, string>>): string {
    return this.#router.build(name, values);
  }

  /**
   * Copies the table, for `cloneRegistry()`.
   * @returns The copy.
   */
  clone(): RouteTable {
    const copy = new RouteTable();
    for (const [name, path] of this.#templates) {
      if (!copy.has(name)) copy.#add(name, path);
    }
    return copy;
  }
}
