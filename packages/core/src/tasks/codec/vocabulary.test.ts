import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
  test,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import {
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskPayloadLoadError,
} from "../errors.ts";
import { withLogs } from "@fedify/fixture";
import { decodeTaskPayload, encodeTaskPayload, encodeTaskPayloads } from "./mod.ts";

/** Serves the preloaded JSON-LD contexts and counts its calls. */
function createLoader(): DocumentLoader & { calls: string[] } {
  const calls: string[] = [];
  const loader = (url: string) => {
    calls.push(url);
    const document = preloadedContexts[url];
    if (document == null) return Promise.reject(new Error(`No network in tests: ${url}`));
    return Promise.resolve({ documentUrl: url, document, contextUrl: null });
  };
  return Object.assign(loader, { calls });
}

const remoteNote = {
  "@context": "https://www.w3.org/ns/activitystreams",
  id: "https://remote.example/notes/1",
  type: "Note",
  content: "From elsewhere",
  // Not in the vocabulary: kept only by carrying the document as it came.
  "https://remote.example/ns#mood": "cheerful",
};

test("a document loader that fails once gives TaskPayloadLoadError, then the retry decodes", async () => {
  const note = await Note.fromJsonLd(remoteNote, { documentLoader: createLoader() });
  const text = await encodeTaskPayload({ note });
  const failure = new Error("connection reset");
  let failed = false;
  const flakyLoader: DocumentLoader = (url, options) => {
    if (!failed) {
      failed = true;
      return Promise.reject(failure);
    }
    return createLoader()(url, options);
  };
  const error = await assertRejects(
    () => decodeTaskPayload(text, { documentLoader: flakyLoader }),
    TaskPayloadLoadError,
    "https://www.w3.org/ns/activitystreams",
  );
  assert(!(error instanceof TaskPayloadDecodingError));
  assertStrictEquals(error.cause, failure);
  assertEquals(error.url, "https://www.w3.org/ns/activitystreams");
  const decoded = await decodeTaskPayload(text, { documentLoader: flakyLoader }) as {
    note: Note;
  };
  assertInstanceOf(decoded.note, Note);
});

test("an object parsed from a document travels as that document, unknown properties included", async () => {
  const note = await Note.fromJsonLd(remoteNote, { documentLoader: createLoader() });
  const decoded = await decodeTaskPayload(await encodeTaskPayload(note), {
    documentLoader: createLoader(),
  });
  assertInstanceOf(decoded, Note);
  assertEquals(await decoded.toJsonLd(), remoteNote);
});

test("a constructed object travels expanded, so that decoding loads no context", async () => {
  const create = new Create({
    id: new URL("https://example.com/activities/1"),
    object: new Note({ content: "Hello" }),
  });
  const text = await encodeTaskPayload(create);
  assert(!text.includes("@context"), text);
  assert(text.includes("https://www.w3.org/ns/activitystreams#content"), text);
  const loader = createLoader();
  const decoded = await decodeTaskPayload(text, { documentLoader: loader });
  assertEquals(loader.calls, []);
  assertInstanceOf(decoded, Create);
  // Compacted from its properties, as on the object that was enqueued.
  assertEquals(await decoded.toJsonLd(), await create.toJsonLd());
});

/** Stands for a Note class from another copy of @fedify/vocab. */
class ForeignNote {
  static get typeId(): URL {
    return new URL("https://www.w3.org/ns/activitystreams#Note");
  }
  readonly #note: Note;
  constructor(content: string) {
    this.#note = new Note({ content });
  }
  toJsonLd(options?: { format?: "expand" }): Promise<unknown> {
    return this.#note.toJsonLd(options);
  }
}

test("a vocabulary object from another copy of @fedify/vocab is recognised by its type", async () => {
  await withLogs(async (records) => {
    const text = await encodeTaskPayload({ note: new ForeignNote("from a copy") });
    const decoded = await decodeTaskPayload(text, { documentLoader: createLoader() }) as {
      note: Note;
    };
    assertInstanceOf(decoded.note, Note);
    assertEquals(decoded.note.content?.toString(), "from a copy");
    assert(
      records.some((record) =>
        record.level === "warning" && String(record.properties.typeId).endsWith("#Note")
      ),
      "no warning about the second copy",
    );
  });
});

class UnknownTypeFromAnotherCopy {
  static get typeId(): URL {
    return new URL("https://example.com/ns#Gadget");
  }
  toJsonLd(): Promise<unknown> {
    return Promise.resolve({});
  }
}

test("a vocabulary object of a type this copy does not know is refused with how to dedupe", async () => {
  const error = await assertRejects(
    () => encodeTaskPayload({ items: [new UnknownTypeFromAnotherCopy()] }),
    TaskPayloadEncodingError,
    "Two copies of @fedify/vocab are installed",
  );
  assertEquals(error.path, "data.items[0]");
  assert(error.message.includes("npm dedupe"), error.message);
});

test("enqueueTaskMany's encoding turns a shared vocabulary object into JSON-LD once", async () => {
  let calls = 0;
  class CountingNote extends Note {
    override toJsonLd(options?: Parameters<Note["toJsonLd"]>[0]): Promise<unknown> {
      calls++;
      return super.toJsonLd(options);
    }
  }
  const note = new CountingNote({ content: "shared" });
  const texts = await encodeTaskPayloads([1, 2, 3].map((n) => ({ n, note })));
  assertEquals(calls, 1);
  for (const [i, text] of texts.entries()) {
    const decoded = await decodeTaskPayload(text, { documentLoader: createLoader() }) as {
      n: number;
      note: Note;
    };
    assertEquals(decoded.n, i + 1);
    assertInstanceOf(decoded.note, Note);
    assertEquals(decoded.note.content?.toString(), "shared");
  }
});

test("a vocabulary object that cannot be rebuilt is a TaskPayloadDecodingError", async () => {
  const text = await encodeTaskPayload(new Note({ content: "x" }));
  const broken = text.replace('"Note"', '"Create"');
  await assertRejects(
    () => decodeTaskPayload(broken, { documentLoader: createLoader() }),
    TaskPayloadDecodingError,
    "Create",
  );
});
