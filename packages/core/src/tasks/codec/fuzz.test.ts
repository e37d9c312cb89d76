import { assert, assertEquals, test } from "@fedify/fixture";
import { Note } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import {
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskPayloadLoadError,
} from "../errors.ts";
import { decodeTaskPayload, encodeTaskPayload } from "./mod.ts";
import {
  generateHostileMessages,
  generateHostilePayloads,
  thenableCalls,
} from "./testdata/hostile.ts";

const SEED = 0x5eed_f00d;

const documentLoader: DocumentLoader = (url) => {
  const document = preloadedContexts[url];
  if (document == null) return Promise.reject(new Error(`No network in tests: ${url}`));
  return Promise.resolve({ documentUrl: url, document, contextUrl: null });
};

/** Rejects if `promise` has not settled long after any sane decode would. */
function withDeadline<T>(promise: Promise<T>, what: string, deadline: Promise<never>): Promise<T> {
  return Promise.race([
    promise,
    deadline.catch(() => Promise.reject(new Error(`${what} stalled`))),
  ]);
}

function createDeadline(ms: number): { promise: Promise<never>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("deadline")), ms);
  });
  promise.catch(() => {});
  return { promise, clear: () => clearTimeout(timer) };
}

const objectPrototypeKeys = Object.getOwnPropertyNames(Object.prototype).join();
const arrayPrototypeKeys = Object.getOwnPropertyNames(Array.prototype).join();

function assertNoPollution(context: string): void {
  assertEquals(({} as Record<string, unknown>).polluted, undefined, context);
  assertEquals(Object.getOwnPropertyNames(Object.prototype).join(), objectPrototypeKeys, context);
  assertEquals(Object.getOwnPropertyNames(Array.prototype).join(), arrayPrototypeKeys, context);
}

async function validMessages(): Promise<string[]> {
  const payloads: unknown[] = [
    { s: "text", n: 42, list: [1, "two", [3]], nested: { a: {} } },
    [new Map<unknown, unknown>([[new Date(5), new Set([new URL("https://a.example/")])]])],
    { big: 12n, re: /a+/g, bytes: new Uint8Array([1, 2, 3]), nan: NaN, undef: undefined },
    { when: Temporal.Instant.from("2024-01-02T03:04:05Z"), sparse: [1, , 3] },
    { note: new Note({ id: new URL("https://example.com/notes/1"), content: "hi" }) },
    Object.assign(Object.create(null), { a: 1 }),
  ];
  return await Promise.all(payloads.map((payload) => encodeTaskPayload(payload)));
}

test("decodeTaskPayload never stalls, crashes or pollutes prototypes on malformed wire strings", async () => {
  const messages = generateHostileMessages(SEED, 3_000, await validMessages());
  assert(messages.length > 3_000);
  const deadline = createDeadline(120_000);
  const outcomes = { decoded: 0, refused: 0, loadFailed: 0 };
  try {
    for (let i = 0; i < messages.length; i++) {
      const text = messages[i];
      const context = `message #${i} (seed ${SEED}): ${text.slice(0, 200)}`;
      try {
        await withDeadline(decodeTaskPayload(text, { documentLoader }), context, deadline.promise);
        outcomes.decoded++;
      } catch (error) {
        if (error instanceof TaskPayloadDecodingError) outcomes.refused++;
        else if (error instanceof TaskPayloadLoadError) outcomes.loadFailed++;
        else throw new Error(`${context} crashed the decoder: ${error}`, { cause: error });
      }
      assertNoPollution(context);
    }
  } finally {
    deadline.clear();
  }
  // Most of the corpus must be refused, or it is not exercising much.
  assert(outcomes.refused > messages.length / 2, JSON.stringify(outcomes));
});

test("encodeTaskPayload refuses hostile payloads with its own error, never calling then()", async () => {
  const payloads = generateHostilePayloads(SEED, 1_000);
  const deadline = createDeadline(120_000);
  let refused = 0;
  try {
    for (let i = 0; i < payloads.length; i++) {
      const context = `payload #${i} (seed ${SEED})`;
      let text: string;
      try {
        text = await withDeadline(encodeTaskPayload(payloads[i]), context, deadline.promise);
      } catch (error) {
        if (!(error instanceof TaskPayloadEncodingError)) {
          throw new Error(`${context} crashed the encoder: ${error}`, { cause: error });
        }
        assert(error.path.startsWith("data"), error.path);
        refused++;
        continue;
      }
      // What is accepted must come back.
      await withDeadline(decodeTaskPayload(text, { documentLoader }), context, deadline.promise);
      assertNoPollution(context);
    }
  } finally {
    deadline.clear();
  }
  assert(refused > payloads.length / 2, `only ${refused} refused`);
  assertEquals(thenableCalls(), 0);
});
