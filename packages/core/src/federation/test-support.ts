// Test doubles and helpers shared by the federation tests.  Not exported
// from mod.ts.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Person } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../activitypub/actors/keys.ts";
import { startTestServer, type TestServer } from "../activitypub/test-support.ts";
import type { Federatable } from "./federatable.ts";
import type { Federation } from "./federation.ts";
import type { FederationFetchOptions } from "./http-handler.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { Message } from "./message.ts";

/**
 * Resolves when `promise` does, or rejects after `ms` milliseconds naming
 * what was awaited.  The timeout is generous: it only turns a hang into a
 * failure.
 */
export async function withTimeout<T>(promise: Promise<T>, label: string, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Timed out waiting for ${label}.`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolver exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

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
    return withTimeout(
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

/** A request received by {@link startInboxServer}. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** What {@link startHttpServer}'s responder answers. */
export interface TestResponse {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/**
 * Starts a real HTTP server on 127.0.0.1 that records every request and
 * answers with what `respond` returns for it.
 */
export async function startHttpServer(
  respond: (request: ReceivedRequest, index: number) => TestResponse,
): Promise<
  {
    readonly url: URL;
    readonly requests: ReceivedRequest[];
    waitForRequests(count: number): Promise<void>;
    close(): Promise<void>;
  } & AsyncDisposable
> {
  const requests: ReceivedRequest[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      const response = respond(request, requests.length);
      requests.push(request);
      res.writeHead(response.status, { Connection: "close", ...response.headers });
      res.end(response.body ?? "");
      waiters = waiters.filter((waiter) => {
        if (requests.length < waiter.count) return true;
        waiter.resolve();
        return false;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return withTimeout(
        new Promise<void>((resolve) => waiters.push({ count, resolve })),
        `${count} requests to the test server`,
      );
    },
    close,
    [Symbol.asyncDispose]: close,
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
