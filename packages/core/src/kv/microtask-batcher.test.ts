import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { MicrotaskBatcher } from "./microtask-batcher.ts";

/** Sends `item` as a caller would: at once when first, else batched. */
function send(batcher: MicrotaskBatcher<number>, sent: number[][], item: number): Promise<void> {
  if (batcher.first()) {
    sent.push([item]);
    return Promise.resolve();
  }
  return batcher.push(item);
}

test("MicrotaskBatcher lets the first call of a turn go at once and gathers the rest of the turn", async () => {
  const sent: number[][] = [];
  const batcher = new MicrotaskBatcher<number>((items) => {
    sent.push(items);
    return Promise.resolve();
  });
  void send(batcher, sent, 1);
  assertEquals(sent, [[1]]);
  const second = send(batcher, sent, 2);
  await Promise.resolve();
  assertEquals(send(batcher, sent, 3), second);
  await Promise.resolve();
  await Promise.resolve();
  void send(batcher, sent, 4);
  assertEquals(sent, [[1]]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  void send(batcher, sent, 5);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(sent, [[1], [2, 3, 4], [5]]);
});

test("MicrotaskBatcher settles every push of a batch as its flush settles", async () => {
  const batcher = new MicrotaskBatcher<number>((items) =>
    items.includes(0) ? Promise.reject(new Error("no zeros")) : Promise.resolve()
  );
  const failed = [batcher.push(0), batcher.push(1)];
  for (const push of failed) await assertRejects(() => push, Error, "no zeros");
  await Promise.all([batcher.push(2), batcher.push(3)]);
  const thrower = new MicrotaskBatcher<number>(() => {
    throw new Error("thrown");
  });
  await assertRejects(() => thrower.push(1), Error, "thrown");
});
