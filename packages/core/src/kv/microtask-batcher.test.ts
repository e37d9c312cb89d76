import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { MicrotaskBatcher } from "./microtask-batcher.ts";

test("MicrotaskBatcher sends the first item of a turn at once and the rest of the turn together", async () => {
  const batches: number[][] = [];
  const batcher = new MicrotaskBatcher<number>((items) => {
    batches.push(items);
    return Promise.resolve();
  });
  batcher.push(1);
  assertEquals(batches, [[1]]);
  const second = batcher.push(2);
  await Promise.resolve();
  assertEquals(batcher.push(3), second);
  await Promise.resolve();
  await Promise.resolve();
  batcher.push(4);
  await new Promise((resolve) => setTimeout(resolve, 0));
  batcher.push(5);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(batches, [[1], [2, 3, 4], [5]]);
});

test("MicrotaskBatcher settles every push of a batch as its flush settles", async () => {
  const batcher = new MicrotaskBatcher<number>((items) =>
    items.includes(0) ? Promise.reject(new Error("no zeros")) : Promise.resolve()
  );
  const failed = [batcher.push(0), batcher.push(1), batcher.push(0)];
  for (const push of failed) await assertRejects(() => push, Error, "no zeros");
  await Promise.all([batcher.push(2), batcher.push(3)]);
  const thrower = new MicrotaskBatcher<number>(() => {
    throw new Error("thrown");
  });
  await assertRejects(() => thrower.push(1), Error, "thrown");
  await assertRejects(() => thrower.push(2), Error, "thrown");
});
