import { getLogger } from "@logtape/logtape";
import { serializeTaskUpdate } from "./serialize.ts";
import type { DashboardTaskUpdate } from "./source.ts";

const logger = getLogger(["fedwork", "dashboard"]);

/** How often a comment line keeps the connection (and proxies) alive. */
const HEARTBEAT_MS = 15_000;
/**
 * How long one stream lasts before it ends and the browser reconnects: it
 * bounds what a client that went away costs when the server adapter
 * cannot tell (a request without an aborting signal).
 */
const MAX_STREAM_MS = 5 * 60_000;

/**
 * Turns `watchTasks()` into a server-sent event stream: one `task` event
 * per update, its data a JSON object with the fields the page shows, and
 * a comment line every 15 seconds.  The watch stops when the client goes
 * away (`requestSignal`), the stream is cancelled, or after five minutes
 * (the browser's `EventSource` reconnects by itself).  Internal.
 * @param watch Starts watching until the signal aborts.
 * @param request The request; the stream holds it while it lasts.
 * @returns The body.
 */
export function streamTaskUpdates(
  watch: (signal: AbortSignal) => AsyncIterable<DashboardTaskUpdate>,
  request: Request,
): ReadableStream<Uint8Array> {
  // Node.js's Request reaches its own signal's controller through a weak
  // reference: once the Request is collected, the caller's abort no longer
  // reaches `request.signal`.  Holding the Request until the stream ends
  // keeps "the client went away" working however long the stream lives.
  const held: { request?: Request } = { request };
  const requestSignal = request.signal as AbortSignal | undefined;
  const controller = new AbortController();
  const stop = () => controller.abort();
  requestSignal?.addEventListener("abort", stop, { once: true });
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let lifetime: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    start(stream) {
      let finished = false;
      const finish = () => {
        clearInterval(heartbeat);
        clearTimeout(lifetime);
        requestSignal?.removeEventListener("abort", stop);
        delete held.request;
        stop();
        if (finished) return;
        finished = true;
        try {
          stream.close();
        } catch {
          // Already closed or cancelled.
        }
      };
      const send = (chunk: string) => {
        if (controller.signal.aborted) return;
        try {
          stream.enqueue(encoder.encode(chunk));
        } catch {
          stop();
        }
      };
      send(": connected\nretry: 3000\n\n");
      heartbeat = setInterval(() => send(": keep-alive\n\n"), HEARTBEAT_MS);
      lifetime = setTimeout(finish, MAX_STREAM_MS);
      (async () => {
        try {
          for await (const update of watch(controller.signal)) {
            if (controller.signal.aborted) break;
            send(`event: task\ndata: ${JSON.stringify(await serializeTaskUpdate(update))}\n\n`);
          }
        } catch (error) {
          if (!controller.signal.aborted) {
            logger.error("The dashboard's task update stream failed: {error}", { error });
          }
        } finally {
          finish();
        }
      })();
    },
    cancel() {
      clearInterval(heartbeat);
      clearTimeout(lifetime);
      delete held.request;
      stop();
    },
  });
}
