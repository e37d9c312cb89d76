// Fedify's createContext() and createRequestContext() helpers: a context
// without first keeping a federation around (one is made when none is
// given).
import { createFederation, testFederationStateOf } from "./federation.ts";
import type { MockContext, MockFederation, MockRequestContext } from "./types.ts";

/**
 * Options of {@link createContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateContextOptions<TContextData> {
  /** The context's data. */
  readonly data: TContextData;
  /** The test federation; a new one by default. */
  readonly federation?: MockFederation<TContextData>;
  /**
   * The context's base URL.
   * @default `https://example.com/`
   */
  readonly url?: URL;
}

/**
 * Options of {@link createRequestContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface CreateRequestContextOptions<TContextData>
  extends CreateContextOptions<TContextData> {
  /** The request; a `GET` of `url` by default. */
  readonly request?: Request;
}

/**
 * Makes a context of a test federation, as `@fedify/testing`'s
 * `createContext()` does.
 * @typeParam TContextData The application data.
 * @param options The data, the federation and the URL.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation.
 * @since 0.4.0
 */
export function createContext<TContextData>(
  options: CreateContextOptions<TContextData>,
): MockContext<TContextData> {
  const federation = federationOf(options, "createContext()");
  return federation.createContext(options.url ?? new URL("https://example.com/"), options.data);
}

/**
 * Makes a request context of a test federation, as `@fedify/testing`'s
 * `createRequestContext()` does.
 * @typeParam TContextData The application data.
 * @param options The data, the federation, the URL and the request.
 * @returns The context.
 * @throws {TypeError} When `federation` is not a test federation.
 * @since 0.4.0
 */
export function createRequestContext<TContextData>(
  options: CreateRequestContextOptions<TContextData>,
): MockRequestContext<TContextData> {
  const federation = federationOf(options, "createRequestContext()");
  const request = options.request ?? new Request(options.url ?? new URL("https://example.com/"));
  return federation.createContext(request, options.data);
}

function federationOf<TContextData>(
  options: CreateContextOptions<TContextData>,
  caller: string,
): MockFederation<TContextData> {
  if (options.federation == null) return createFederation<TContextData>();
  if (testFederationStateOf(options.federation) == null) {
    throw new TypeError(
      `The federation given to ${caller} must come from createFederation() of ` +
        "@fedwork/testing/app.",
    );
  }
  return options.federation;
}
