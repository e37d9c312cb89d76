import { assertEquals, test } from "@fedify/fixture";
import { InFlightList } from "./in-flight-list.ts";

test("InFlightList keeps what was added and not removed, whatever the order of removal", () => {
  const list = new InFlightList<string>();
  const handles = ["a", "b", "c", "d", "e"].map((value) => list.add(value));
  const twice = list.add("c");
  assertEquals(list.size, 6);
  list.remove(handles[0]);
  list.remove(handles[2]);
  list.remove(handles[0]); // a second removal changes nothing
  assertEquals(list.values().sort(), ["b", "c", "d", "e"]);
  list.remove(twice);
  list.remove(handles[4]);
  assertEquals(list.values().sort(), ["b", "d"]);
  const late = list.add("f");
  list.remove(handles[1]);
  assertEquals(list.values().sort(), ["d", "f"]);
  list.remove(late);
  list.remove(handles[3]);
  assertEquals(list.values(), []);
  assertEquals(list.size, 0);
});
