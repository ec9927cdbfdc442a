import { describe, expect, it } from "vitest";
import { ByteBudget } from "./byteBudget.ts";

describe("a byte budget", () => {
  it("lets tasks in while they fit, the rest in the order they came as bytes come back", async () => {
    const budget = new ByteBudget(10);
    const order: string[] = [];
    const a = await budget.take(6);
    const noting = (name: string) => (give: () => void) => {
      order.push(name);
      return give;
    };
    const b = budget.take(6).then(noting("b"));
    const c = budget.take(3).then(noting("c"));
    await new Promise((r) => setTimeout(r, 5));
    // c would fit, but waits behind b: none is passed over for good.
    expect(order).toEqual([]);
    a();
    const giveB = await b;
    const giveC = await c;
    expect(order).toEqual(["b", "c"]);
    expect(budget.held()).toBe(9);
    giveB();
    giveB();
    giveC();
    expect(budget.held()).toBe(0);
  });

  it("takes all of itself for a task larger than it, alone", async () => {
    const budget = new ByteBudget(10);
    const give = await budget.take(50);
    expect(budget.held()).toBe(10);
    let small = false;
    const next = budget.take(1).then((g) => {
      small = true;
      return g;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(small).toBe(false);
    give();
    (await next)();
    expect(budget.held()).toBe(0);
  });
});
