/**
 * Thrown when a URI template is malformed or uses more than RFC 6570's
 * level 1 (simple `{var}` expressions); the message says what to change.
 * @since 0.2.0
 */
export class UriTemplateError extends TypeError {
  /** The offending template. */
  readonly template: string;

  /**
   * @param template The template.
   * @param message What is wrong and how to fix it.
   */
  constructor(template: string, message: string) {
    super(message);
    this.name = "UriTemplateError";
    this.template = template;
  }
}

/**
 * Thrown when a route is added to a {@link Router} under a name already
 * taken, or with a template that could match the same path as a route
 * already there (the router would not know which one a request means).
 * @since 0.2.0
 */
export class RouteConflictError extends Error {
  /** The template being added. */
  readonly template: string;
  /** The template of the route it conflicts with. */
  readonly conflictsWith: string;

  /**
   * @param template The template being added.
   * @param conflictsWith The template already registered.
   * @param message What conflicts, with an example path when there is one.
   */
  constructor(template: string, conflictsWith: string, message: string) {
    super(message);
    this.name = "RouteConflictError";
    this.template = template;
    this.conflictsWith = conflictsWith;
  }
}

/**
 * Thrown by {@link Router.build} when the route is unknown or a value is
 * missing or empty.
 * @since 0.2.0
 */
export class UriBuildError extends TypeError {
  /**
   * @param message What is missing.
   */
  constructor(message: string) {
    super(message);
    this.name = "UriBuildError";
  }
}

/**
 * Thrown when a route path given to a registration method (e.g.
 * `setActorDispatcher()`) is malformed.
 * @since 0.1.0
 */
export class RoutePathError extends TypeError {
  /** The offending path. */
  readonly path: string;

  /**
   * @param path The path.
   * @param message What is wrong and how to fix it.
   */
  constructor(path: string, message: string) {
    super(message);
    this.name = "RoutePathError";
    this.path = path;
  }
}

/**
 * Thrown by a context's URI builders (e.g. `getActorUri()`) when the route
 * they need has not been registered.
 * @since 0.1.0
 */
export class RouteNotRegisteredError extends Error {
  /** The missing registration, e.g. `"actor dispatcher"`. */
  readonly registration: string;

  /**
   * @param registration The missing registration.
   * @param method The method that registers it, used in the message.
   */
  constructor(registration: string, method: string) {
    super(`No ${registration} is registered; call federation.${method}() first.`);
    this.name = "RouteNotRegisteredError";
    this.registration = registration;
  }
}

/**
 * Thrown when a dispatcher or listener set is registered twice.
 * @since 0.1.0
 */
export class DuplicateRegistrationError extends Error {
  /** What was registered twice, e.g. `"actor dispatcher"`. */
  readonly registration: string;

  /**
   * @param registration What was registered twice.
   * @param method The registration method, used in the message.
   */
  constructor(registration: string, method: string) {
    super(`The ${registration} is already registered; call ${method}() only once.`);
    this.name = "DuplicateRegistrationError";
    this.registration = registration;
  }
}
