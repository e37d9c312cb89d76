// A Fedify app's createFederation() options, typed with Fedify's own
// FederationOptions, build a Fedwork federation where they mean the same;
// the ones Fedwork lacks are refused by name, with what to do instead.
import { assertEquals, assertThrows, test } from "@fedify/fixture";
import {
  type FederationOptions as FedifyFederationOptions,
  InProcessMessageQueue,
  MemoryKvStore,
} from "@fedify/fedify";
import { type DocumentLoaderFactoryOptions, getDocumentLoader } from "@fedify/vocab-runtime";
import { createFederation, DEFAULT_USER_AGENT, UnknownOptionError } from "@fedwork/core";

/**
 * The options whose meaning is the same in both.  (Not the retry policies:
 * Fedwork types them with @js-temporal/polyfill's Temporal, Fedify with the
 * runtime's, and where TypeScript knows the latter, as under Deno, the two
 * Duration types differ.  At run time either policy works in either.)
 */
type SharedOptions = Pick<
  FedifyFederationOptions<void>,
  | "kv"
  | "queue"
  | "origin"
  | "userAgent"
  | "documentLoaderFactory"
  | "allowPrivateAddress"
  | "manuallyStartQueue"
>;

test("A Fedify app's options build a Fedwork federation", () => {
  let factoryOptions: DocumentLoaderFactoryOptions | undefined;
  const options: SharedOptions = {
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    origin: { handleHost: "example.com", webOrigin: "https://example.com" },
    userAgent: { software: "MyApp/1.0.0", url: "https://example.com/" },
    documentLoaderFactory(options) {
      factoryOptions = options;
      return getDocumentLoader(options);
    },
    allowPrivateAddress: false,
    manuallyStartQueue: true,
  };
  // Fedify's option types are assignable to Fedwork's.
  const federation = createFederation<void>(options);
  const ctx = federation.createContext(new URL("http://localhost:8000/"), undefined);
  assertEquals(ctx.canonicalOrigin, "https://example.com");
  assertEquals(factoryOptions, {
    allowPrivateAddress: false,
    userAgent: `MyApp/1.0.0 (${DEFAULT_USER_AGENT}; +https://example.com/)`,
  });
});

test("A Fedify app's contextLoaderFactory is refused, naming documentLoaderFactory", () => {
  const options: Pick<FedifyFederationOptions<void>, "kv" | "contextLoaderFactory"> = {
    kv: new MemoryKvStore(),
    contextLoaderFactory: getDocumentLoader,
  };
  const error = assertThrows(
    () => createFederation<void>(options),
    UnknownOptionError,
    "documentLoaderFactory",
  );
  assertEquals(error.option, "contextLoaderFactory");
});

test("A Fedify option Fedwork lacks is refused with advice", () => {
  const options: Pick<FedifyFederationOptions<void>, "kv" | "onOutboxError"> = {
    kv: new MemoryKvStore(),
    onOutboxError: () => {},
  };
  const error = assertThrows(
    () => createFederation<void>(options),
    UnknownOptionError,
    'federation.on("failed"',
  );
  assertEquals(error.option, "onOutboxError");
});

test("Fedify's HttpMessageSignaturesSpec and Fedwork's are one type (checked by deno check and tsc)", () => {
  type FedifySpec = import("@fedify/fedify").HttpMessageSignaturesSpec;
  type FedworkSpec = import("@fedwork/core").HttpMessageSignaturesSpec;
  const fromFedify: FedworkSpec[] = [
    "rfc9421",
    "draft-cavage-http-signatures-12",
  ] satisfies FedifySpec[];
  const fromFedwork: FedifySpec[] = fromFedify;
  // @ts-expect-error: neither knows another scheme.
  const unknown: FedworkSpec = "draft-cavage-http-signatures-11";
  assertEquals([fromFedwork.length, typeof unknown], [2, "string"]);
});
