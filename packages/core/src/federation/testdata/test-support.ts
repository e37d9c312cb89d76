// Test doubles and helpers shared by the federation tests.  Not exported
// from mod.ts.
import { type RecordedRequest, startTestServer, type TestServer, within } from "@fedify/fixture";
import { Person } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../../activitypub/actors/keys.ts";
import type { Federatable } from "../federatable-api.ts";
import { createFederation, type Federation } from "../federation.ts";
import type { FederationOptions } from "../options.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import type { FederationFetchOptions } from "../api.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../../queue/message-queue.ts";
import type { Message } from "../message.ts";

/** One call to {@link RecordingQueue.enqueue}. */
export interface EnqueueRecord {
  readonly message: Message;
  readonly options: MessageQueueEnqueueOptions;
}

/**
 * A queue seam double: records every enqueue and listen call, and (unless
 * `deliver` is `false`) hands messages to a real InProcessMessageQueue so
 * workers can consume them.
 */
export class RecordingQueue implements MessageQueue, AsyncDisposable {
  readonly nativeRetrial: boolean;
  readonly enqueued: EnqueueRecord[] = [];
  readonly handlerErrors: unknown[] = [];
  listenCount = 0;
  readonly #deliver: boolean;
  readonly #inner = new InProcessMessageQueue();
  #listeners: (() => void)[] = [];

  constructor(options: { nativeRetrial?: boolean; deliver?: boolean } = {}) {
    this.nativeRetrial = options.nativeRetrial ?? false;
    this.#deliver = options.deliver ?? true;
  }

  // deno-lint-ignore no-explicit-any
  async enqueue(message: any, options: MessageQueueEnqueueOptions = {}): Promise<void> {
    this.enqueued.push({ message, options });
    if (this.#deliver) await this.#inner.enqueue(message, options);
    this.#notify();
  }

  /** Resolves once `predicate` holds (checked after every recorded event). */
  waitUntil(predicate: () => boolean, label: string): Promise<void> {
    if (predicate()) return Promise.resolve();
    return within(
      new Promise<void>((resolve) => {
        const check = () => {
          if (!predicate()) return;
          this.#listeners = this.#listeners.filter((listener) => listener !== check);
          resolve();
        };
        this.#listeners.push(check);
      }),
      label,
    );
  }

  listen(
    // deno-lint-ignore no-explicit-any
    handler: (message: any) => Promise<void> | void,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    this.listenCount++;
    this.#notify();
    if (!this.#deliver) {
      return new Promise((resolve) => options.signal?.addEventListener("abort", () => resolve()));
    }
    return this.#inner.listen(async (message) => {
      try {
        await handler(message);
      } catch (error) {
        this.handlerErrors.push(error);
        this.#notify();
        throw error;
      }
    }, options);
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#inner[Symbol.asyncDispose]();
  }
}

/** A request received by {@link startHttpServer}, headers as a plain object. */
export interface ReceivedRequest {
  readonly method: string;
  /** The path and query, e.g. `/users/bob/inbox`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What {@link startHttpServer}'s responder answers. */
export interface TestResponse {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/**
 * Starts `@fedify/fixture`'s loopback test server with a responder that
 * sees each request as a {@link ReceivedRequest}.
 */
export async function startHttpServer(
  respond: (request: ReceivedRequest, index: number) => TestResponse,
): Promise<
  {
    readonly url: URL;
    readonly requests: readonly ReceivedRequest[];
    waitForRequests(count: number): Promise<void>;
    close(): Promise<void>;
  } & AsyncDisposable
> {
  const toReceived = (request: RecordedRequest): ReceivedRequest => {
    const url = new URL(request.url);
    return {
      method: request.method,
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      body: request.body,
    };
  };
  const server = await startTestServer(async (request, index) => {
    const body = request.method === "GET" ? "" : await request.text();
    const received = toReceived({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body,
    });
    const response = respond(received, index);
    return new Response(response.body ?? "", {
      status: response.status,
      headers: response.headers,
    });
  });
  return {
    url: server.url,
    get requests() {
      return server.requests.map(toReceived);
    },
    waitForRequests: (count) => server.waitForRequests(count),
    close: () => server.close(),
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/**
 * Starts a test inbox on 127.0.0.1 that answers each request with the next
 * status from `statuses` (the last one repeats).
 */
export function startInboxServer(
  statuses: readonly number[],
): ReturnType<typeof startHttpServer> {
  return startHttpServer((_request, index) => {
    const status = statuses[Math.min(index, statuses.length - 1)];
    return {
      status,
      headers: { "Content-Type": "text/plain" },
      body: status >= 400 ? "failure" : "",
    };
  });
}

let sharedKeyPair: Promise<CryptoKeyPair> | undefined;

/** One RSA key pair shared by the tests of a process (generating one is slow). */
export function testKeyPair(): Promise<CryptoKeyPair> {
  return sharedKeyPair ??= generateCryptoKeyPair();
}

/**
 * Registers an actor dispatcher serving a `Person` per identifier, with the
 * shared test key pair, so that the federation can sign deliveries.
 */
export function registerTestActor<TContextData>(
  federation: Federatable<TContextData>,
  path = "/users/{identifier}",
): void {
  federation.setActorDispatcher(path, async (ctx, identifier) => {
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => [await testKeyPair()]);
}

/**
 * Serves a federation on a real HTTP server on 127.0.0.1 (node:http, which
 * Deno, Node.js and Bun all provide), answering through `fetch()`.
 */
export function serveFederation<TContextData>(
  federation: Federation<TContextData>,
  contextData: TContextData,
  options: Omit<FederationFetchOptions<TContextData>, "contextData"> = {},
): Promise<TestServer> {
  return startTestServer((request) => federation.fetch(request, { contextData, ...options }));
}

/**
 * Runs the federation's workers until `body` returns, then stops them and
 * waits for them to finish.
 * @param federation The federation.
 * @param body What to do while the workers run.
 * @returns What `body` returns.
 */
export async function withWorkers<T>(
  federation: Federation<void>,
  body: () => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  try {
    return await body();
  } finally {
    controller.abort();
    await within(running, "the workers to stop");
  }
}

/**
 * A federation on `queue` that may deliver to loopback inboxes, with the
 * test actor registered and deliveries retried up to `retry.attempts`
 * times, `retry.delayMs` apart; `options` override the rest.
 */
export function loopbackFederation(
  queue: MessageQueue,
  options: Partial<FederationOptions<void>> = {},
  retry: { readonly attempts: number; readonly delayMs: number } = { attempts: 20, delayMs: 10 },
): Federation<void> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: ({ attempts }) =>
      attempts >= retry.attempts ? null : millisecondsToDuration(retry.delayMs),
    ...options,
  });
  registerTestActor(federation);
  return federation;
}
