import { assertEquals, test } from "@fedify/fixture";
import { ProcessWakeups } from "./process-wakeups.ts";

test("ProcessWakeups wakes the listeners of one channel only, until they unsubscribe", () => {
  const wakeups = new ProcessWakeups();
  const woken: string[] = [];
  const stopA = wakeups.subscribe("a", () => woken.push("a1"));
  wakeups.subscribe("a", () => woken.push("a2"));
  wakeups.subscribe("b", () => woken.push("b"));
  wakeups.notify("a");
  assertEquals(woken, ["a1", "a2"]);
  stopA();
  stopA();
  wakeups.notify("a");
  wakeups.notify("nobody");
  assertEquals(woken, ["a1", "a2", "a2"]);
});

test("ProcessWakeups calls a function subscribed twice twice, and lets a wake-up unsubscribe others", () => {
  const wakeups = new ProcessWakeups();
  let calls = 0;
  const wake = () => calls++;
  const first = wakeups.subscribe("q", wake);
  wakeups.subscribe("q", wake);
  wakeups.notify("q");
  assertEquals(calls, 2);
  first();
  wakeups.notify("q");
  assertEquals(calls, 3);
  // A listener that unsubscribes another while being woken: the other is
  // still woken this time (the set is copied first), not the next.
  const order: string[] = [];
  const wakeups2 = new ProcessWakeups();
  let stopLater = () => {};
  wakeups2.subscribe("q", () => {
    order.push("first");
    stopLater();
  });
  stopLater = wakeups2.subscribe("q", () => order.push("second"));
  wakeups2.notify("q");
  wakeups2.notify("q");
  assertEquals(order, ["first", "second", "first"]);
});
