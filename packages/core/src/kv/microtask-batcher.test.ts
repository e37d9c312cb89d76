import { assertEquals, test } from "@fedify/fixture";
import { MicrotaskBatcher } from "./microtask-batcher.ts";

test("MicrotaskBatcher hands items pushed a few awaits apart over as one batch", async () => {
  const batches: number[][] = [];
  const batcher = new MicrotaskBatcher<number>((items) => batches.push(items));
  batcher.push(1);
  batcher.push(2);
  await Promise.resolve();
  batcher.push(3);
  await Promise.resolve();
  await Promise.resolve();
  batcher.push(4);
  await new Promise((resolve) => setTimeout(resolve, 0));
  batcher.push(5);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(batches, [[1, 2, 3, 4], [5]]);
});
