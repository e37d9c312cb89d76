// The dashboard's layout in a real browser (the system's headless Chromium)
// at the widths operators use, filled with what makes tables overflow: long
// task names, long unbroken error messages (URLs with signatures), running
// task ids, many workers.  Every element and every run of text must lie
// inside its card, measured with getBoundingClientRect(), not judged by eye;
// a screenshot of each width goes to a temporary folder for a person to
// look at when the test fails.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, assertEquals, startTestServer, test, waitUntil } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { Create, Note, Person } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  generateCryptoKeyPair,
  InProcessMessageQueue,
  MemoryKvStore,
  ParallelMessageQueue,
  PermanentError,
} from "@fedwork/core";
import { z } from "zod";
import { createDashboard } from "./mod.ts";
import { serve } from "./testdata/serve.ts";

// The widths the brief names, and those an operator reported overflowing.
const WIDTHS = [1280, 1300, 1400, 1440, 1600, 1920];
const NARROW_WIDTHS = [720, 400];
const WORKER_PROCESSES = 7;
const RUNNING_PER_WORKER = 3;

const SIGNATURE = "9f3b".repeat(24);
const LONG_ERRORS = [
  `PUT https://objects.media.example/user-uploads/2026/12/01/${SIGNATURE}/original.png?X-Amz-Signature=${SIGNATURE} refused: SignatureDoesNotMatch`,
  `SMTP 550 from mx.mail-provider.example: mailbox_unavailable_for_recipient_${"x".repeat(90)}`,
  `https://search-index.example/api/v3/collections/federated_statuses_by_language_and_date/documents/${SIGNATURE}`,
];
const LONG_NAMES = [
  "mastodon.import_followers_from_archive_and_rebuild_home_timeline",
  "media.transcode_video_attachment_for_mobile_clients_h264_aac",
  "search.reindex_federated_statuses_for_full_text_search",
];

/** What the page measures: every rendered box and text run against its card. */
interface Geometry {
  readonly viewport: number;
  readonly documentWidth: number;
  /** What lies outside its card, by card id. */
  readonly outside: Readonly<Record<string, readonly string[]>>;
  readonly workersHeadings: readonly { readonly text: string; readonly visible: boolean }[];
  readonly cancelledIn: string | null;
}

// Runs in the page (as text: the workspace's types have no DOM, as the
// dashboard's own client script): `main > section` is a card.  An element
// or a text run is outside when any edge passes its card's by more than
// half a pixel; one in a scrolled-away part of a scroll box counts too,
// since the operator would not see it without scrolling.
const MEASURE = String.raw`(() => {
  const outside = {};
  const describe = (node) => {
    const element = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    const id = element.closest("[id]")?.id ?? "";
    const text = (node.textContent ?? "").trim().slice(0, 40);
    return element.tagName.toLowerCase() + "." + element.className + " in #" + id + ': "' + text + '"';
  };
  const check = (node, box, card, cardId) => {
    if (box.width === 0 && box.height === 0) return;
    if (
      box.left < card.left - 0.5 || box.right > card.right + 0.5 ||
      box.top < card.top - 0.5 || box.bottom > card.bottom + 0.5
    ) {
      (outside[cardId] ??= []).push(
        describe(node) + " spans " + Math.round(box.left) + "–" + Math.round(box.right) +
          " px, its card " + Math.round(card.left) + "–" + Math.round(card.right) + " px",
      );
    }
  };
  for (const section of document.querySelectorAll("main > section")) {
    const card = section.getBoundingClientRect();
    for (const element of section.querySelectorAll("*")) {
      if (element.getClientRects().length === 0) continue;
      check(element, element.getBoundingClientRect(), card, section.id);
    }
    const walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text != null; text = walker.nextNode()) {
      if ((text.textContent ?? "").trim() === "") continue;
      const range = document.createRange();
      range.selectNodeContents(text);
      for (const box of range.getClientRects()) check(text, box, card, section.id);
    }
  }
  const cancelled = [...document.querySelectorAll("main [role=status]")]
    .find((node) => (node.textContent ?? "").startsWith("Cancelled"));
  return {
    viewport: innerWidth,
    documentWidth: document.documentElement.scrollWidth,
    outside,
    workersHeadings: [...document.querySelectorAll("#workers thead th")].map((th) => {
      const box = th.getBoundingClientRect();
      return { text: th.textContent ?? "", visible: box.width > 0 && box.height > 0 };
    }),
    cancelledIn: cancelled?.closest("section")?.id ?? null,
  };
})()`;

/** A federation on the shared store whose worker runs long tasks until released. */
function busyWorker(kv: MemoryKvStore, released: Promise<void>) {
  const federation = createFederation<void>({
    kv,
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), RUNNING_PER_WORKER),
    manuallyStartQueue: true,
  });
  const transcode = federation.defineTask(LONG_NAMES[1], {
    schema: z.object({ file: z.string() }),
    async handler(ctx, { file }) {
      await ctx.task.reportProgress({ percent: 35, data: { file, frames: 3_500, of: 10_000 } });
      await Promise.race([
        released,
        new Promise((resolve) => ctx.task.signal.addEventListener("abort", resolve)),
      ]);
    },
  });
  return { federation, transcode };
}

function startWorker(federation: Federation<void>, signal: AbortSignal): Promise<void> {
  return federation.startQueue(undefined, {
    signal,
    presence: { heartbeatInterval: { milliseconds: 200 } },
  });
}

test("from 1280 to 1920 px every table, cell and text of a full dashboard stays inside its card", async () => {
  const kv = new MemoryKvStore();
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const main = createFederation<void>({
    kv,
    queue: {
      task: new ParallelMessageQueue(new InProcessMessageQueue(), RUNNING_PER_WORKER),
      outbox: new InProcessMessageQueue(),
    },
    manuallyStartQueue: true,
    taskRetryPolicy: () => null,
    allowPrivateAddress: true,
    hostHealth: { failureThreshold: 1, initialProbeDelay: { hours: 1 } },
  });
  const keyPair = await generateCryptoKeyPair();
  main.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0].cryptographicKey,
    })).setKeyPairsDispatcher(() => [keyPair]);
  const failing = LONG_NAMES.map((name, index) =>
    main.defineTask(name, {
      schema: z.object({ account: z.string() }),
      handler() {
        throw new PermanentError(LONG_ERRORS[index]);
      },
    })
  );
  const workers = Array.from({ length: WORKER_PROCESSES - 1 }, () => busyWorker(kv, released));
  const mainTranscode = main.defineTask(LONG_NAMES[1] + ".main", {
    schema: z.object({ file: z.string() }),
    async handler(ctx) {
      while (!ctx.task.signal.aborted) {
        await ctx.task.reportProgress({ percent: 10, data: { step: "probing the codec" } });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw ctx.task.signal.reason;
    },
  });
  await using downInbox = await startTestServer(() => new Response("down", { status: 503 }));
  const controller = new AbortController();
  const running = [
    startWorker(main, controller.signal),
    ...workers.map(({ federation }) => startWorker(federation, controller.signal)),
  ];
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-dashboard-layout-"));
  const server = await serve(createDashboard(main, {
    basePath: "/admin",
    refreshInterval: { seconds: 1 },
    authorize: () => true,
  }));
  try {
    const ctx = main.createContext(new URL(server.url), undefined);
    for (let round = 0; round < 3; round++) {
      for (const definition of failing) {
        await ctx.enqueueTask(definition, { account: `user${round}@mastodon.example` });
      }
    }
    await waitUntil(async () => (await main.countFailedTasks()).size === failing.length, {
      what: "the failing tasks to fail for good",
    });
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: new URL("https://down.example/users/bob"), inboxId: new URL("/inbox", downInbox.url) },
      new Create({
        id: new URL("/activities/1", server.url),
        actor: ctx.getActorUri("alice"),
        object: new Note({ content: "Hello" }),
      }),
    );
    for (const { federation, transcode } of workers) {
      const workerCtx = federation.createContext(new URL(server.url), undefined);
      for (let n = 0; n < RUNNING_PER_WORKER; n++) {
        await workerCtx.enqueueTask(transcode, {
          file: `https://media.example/${SIGNATURE}/video-${n}.mp4`,
        });
      }
    }
    await waitUntil(
      async () => {
        const listed = await main.listWorkers();
        return listed.length === WORKER_PROCESSES &&
          listed.filter((worker) => worker.currentTaskIds.length === RUNNING_PER_WORKER).length ===
            WORKER_PROCESSES - 1;
      },
      { what: "every worker to report its running tasks" },
    );

    const browser = await launchChromium(join(dataDir, "chromium-profile"), {
      viewport: { width: WIDTHS[0], height: 1000 },
    });
    try {
      const page = await browser.newPage();
      assertEquals((await page.goto(`${server.url}/admin/`))?.status(), 200);
      await waitUntil(
        async () =>
          await page.locator("#workers tbody tr.worker").count() === WORKER_PROCESSES &&
          await page.locator("#failed tbody tr.failed-task").count() >= 9 &&
          await page.locator("#hosts tbody tr.host").count() === 1,
        { what: "the page to show every worker, failed task and host" },
      );
      // A cancelled task: its message belongs to the live-progress panel.
      const { messageId } = await ctx.enqueueTask(mainTranscode, { file: "clip.mp4" }) as {
        messageId: string;
      };
      const row = page.locator(`tr.task-progress[data-id="${messageId}"]`);
      await row.locator(".state", { hasText: "running" }).waitFor({ timeout: 30_000 });
      // Clicked through the DOM: where a card overflows, the next card
      // covers the button, and the geometry below is what must say so.
      await row.getByRole("button", { name: "Cancel" }).dispatchEvent("click");
      await row.getByRole("button", { name: "Really cancel?" }).dispatchEvent("click");
      await row.locator(".state", { hasText: "cancelled" }).waitFor({ timeout: 30_000 });
      await page.locator("main [role=status]", { hasText: /^Cancelled / }).waitFor({
        timeout: 30_000,
      });
      // Open the details of a failed task: its payload and stack are long too.
      await page.locator("#failed tr.failed-task").first().getByRole("button", {
        name: "Details",
      }).dispatchEvent("click");
      await page.locator("tr.failed-details pre.stack").waitFor({ timeout: 30_000 });

      const problems: string[] = [];
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 1000 });
        // The layout after the resize, and after the next refresh redrew it.
        await page.evaluate("new Promise((resolve) => requestAnimationFrame(resolve))");
        await page.screenshot({
          path: join(dataDir, `dashboard-${width}.png`),
          fullPage: true,
        });
        const geometry = await page.evaluate(MEASURE) as Geometry;
        assertEquals(geometry.viewport, width);
        if (geometry.documentWidth > width) {
          problems.push(`${width} px: the page is ${geometry.documentWidth} px wide`);
        }
        for (const [card, lines] of Object.entries(geometry.outside)) {
          problems.push(`${width} px: ${lines.length} outside #${card}, e.g. ${lines[0]}`);
        }
        assertEquals(geometry.workersHeadings.map((th) => th.text), [
          "Host",
          "PID",
          "Runtime",
          "Queues",
          "State",
          "Running",
          "Completed",
          "Failed",
          "Last heartbeat",
        ]);
        assert(geometry.workersHeadings.every((th) => th.visible), `${width} px: a hidden column`);
        if (geometry.cancelledIn !== "progress-panel") {
          problems.push(
            `${width} px: the "Cancelled …" message is in #${geometry.cancelledIn}, ` +
              "not in #progress-panel",
          );
        }
      }
      // Narrower than any table can wrap to: the page itself must not
      // scroll sideways; a table scrolls inside its card instead.
      for (const width of NARROW_WIDTHS) {
        await page.setViewportSize({ width, height: 1000 });
        await page.evaluate("new Promise((resolve) => requestAnimationFrame(resolve))");
        await page.screenshot({ path: join(dataDir, `dashboard-${width}.png`), fullPage: true });
        const geometry = await page.evaluate(MEASURE) as Geometry;
        if (geometry.documentWidth > width) {
          problems.push(`${width} px: the page is ${geometry.documentWidth} px wide`);
        }
        const cards = await page.evaluate(
          `[...document.querySelectorAll("main > section")].filter((card) => {
            const box = card.getBoundingClientRect();
            return box.left < 0 || box.right > innerWidth;
          }).map((card) => card.id)`,
        ) as string[];
        for (const card of cards) problems.push(`${width} px: #${card} is wider than the window`);
      }
      assertEquals(problems, [], `screenshots in ${dataDir}`);
    } finally {
      await browser.close();
    }
  } finally {
    release();
    await server.close();
    controller.abort();
    await Promise.all(running);
  }
  // Only after a success: a failed run keeps its screenshots for a person.
  await rm(dataDir, { recursive: true, force: true });
});
