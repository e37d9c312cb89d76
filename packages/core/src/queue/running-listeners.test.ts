import { assert, assertEquals, test } from "@fedify/fixture";
import { RunningListeners } from "./running-listeners.ts";

function untilAborted(signal: AbortSignal, finished: string[], name: string): Promise<void> {
  return new Promise((resolve) => {
    signal.addEventListener("abort", () => {
      // The handler still running when the stop came finishes a tick later.
      setTimeout(() => (finished.push(name), resolve()), 5);
    }, { once: true });
  });
}

test("RunningListeners.close aborts every listener and waits for all of them", async () => {
  const listeners = new RunningListeners();
  const finished: string[] = [];
  listeners.track(untilAborted(listeners.signal(), finished, "a"));
  listeners.track(untilAborted(listeners.signal(new AbortController().signal), finished, "b"));
  assert(!listeners.closed);
  await listeners.close();
  assert(listeners.closed);
  assertEquals(finished.sort(), ["a", "b"]);
});

test("RunningListeners.signal also aborts with the caller's signal", () => {
  const listeners = new RunningListeners();
  const caller = new AbortController();
  const signal = listeners.signal(caller.signal);
  caller.abort();
  assert(signal.aborted);
  assert(!listeners.closed);
});

test("RunningListeners.close does not wait for a listener that already settled", async () => {
  const listeners = new RunningListeners();
  const failed = listeners.track(Promise.reject(new Error("engine down")));
  await failed.catch(() => {});
  await listeners.close();
});

test("RunningListeners.signal carries the reason of whichever source aborted first", async () => {
  const listeners = new RunningListeners();
  const caller = new AbortController();
  const first = listeners.signal(caller.signal);
  const reason = new Error("the worker stops");
  caller.abort(reason);
  assertEquals(first.reason, reason);
  // Aborting again (closing the instance) changes nothing on it.
  const second = listeners.signal(new AbortController().signal);
  await listeners.close();
  assertEquals(first.reason, reason);
  assert(second.aborted);
  assert(second.reason instanceof DOMException, String(second.reason));
  // A signal asked for once a source aborted is that source's.
  assert(listeners.signal(new AbortController().signal).aborted);
});
