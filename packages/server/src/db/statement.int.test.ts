import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "./index.js";
import { checkStatements, shapeOf, statement, type ValueOf } from "./sql.js";
import { createTestDatabase } from "../../test/helpers.js";

type Tags = { storeId: number; tags: readonly string[]; upper?: true };

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await createTestDatabase();
  handle = database.handle;
});
afterAll(() => database.drop());
// The suites run with every statement checked (see helpers): a test that turns it off turns it back on.
afterEach(() => checkStatements(true));

describe("statements compiled once per shape", () => {
  it("run with each call's own values, in text built once per shape", async () => {
    checkStatements(false);
    let built = 0;
    const tagged = statement((db, value: ValueOf<Tags>, { upper }) => {
      built++;
      // Whether the arguments carry `upper` is their shape: the text may depend on it.
      const tag = upper ? sql`upper(t.tag)` : sql`t.tag`;
      return sql<{ store_id: number; tag: string }>`select ${value((args) => args.storeId)}::bigint as store_id, ${tag} as tag
        from unnest(${value((args) => [...args.tags])}::text[]) with ordinality as t(tag, n) order by n`;
    });
    expect(await tagged(handle.db, { storeId: 7, tags: ["a", "b"] })).toEqual([
      { store_id: 7, tag: "a" },
      { store_id: 7, tag: "b" },
    ]);
    expect(await tagged(handle.db, { storeId: 8, tags: ["c"], upper: undefined })).toEqual([{ store_id: 8, tag: "c" }]);
    expect(built).toBe(1);
    // Another shape: built once more, and then not again.
    expect(await tagged(handle.db, { storeId: 9, tags: ["d"], upper: true })).toEqual([{ store_id: 9, tag: "D" }]);
    expect(await tagged(handle.db, { storeId: 9, tags: ["e", "f"], upper: true })).toEqual([
      { store_id: 9, tag: "E" },
      { store_id: 9, tag: "F" },
    ]);
    expect(built).toBe(2);
    // Inside a transaction, through it.
    const inside = await handle.db.transaction().execute((trx) => tagged(trx, { storeId: 10, tags: ["g"] }));
    expect(inside).toEqual([{ store_id: 10, tag: "g" }]);
  });

  it("refuse a value given directly, which would be the first run's at every run", async () => {
    const direct = statement((db, _value: ValueOf<{ storeId: number }>, args) => sql<{ id: number }>`select ${args.storeId}::bigint as id`);
    await expect(direct(handle.db, { storeId: 1 })).rejects.toThrow("value $1 of a statement compiled once per shape was not given by value()");
  });

  it("fail a run whose text depends on a value, not on its shape, when checked as the suites check them", async () => {
    // The text depends on the value of `upper`, which the shape does not see.
    const careless = statement(
      (db, value: ValueOf<{ tags: string[]; upper: boolean }>, { upper }) =>
        sql<{ tag: string }>`select ${upper ? sql`upper(${value((args) => args.tags[0])})` : value((args) => args.tags[0])}::text as tag`,
    );
    checkStatements(true);
    expect(await careless(handle.db, { tags: ["a"], upper: false })).toEqual([{ tag: "a" }]);
    await expect(careless(handle.db, { tags: ["b"], upper: true })).rejects.toThrow("differs from its run's own");
    // Unchecked, the first shape's text would have run: the lower-case tag.
    checkStatements(false);
    expect(await careless(handle.db, { tags: ["c"], upper: true })).toEqual([{ tag: "c" }]);
  });
});

describe("a statement's shape", () => {
  it("is the keys its arguments carry and how many records each list holds, never a value", () => {
    const order = (id: string, extra: object = {}) => ({ external_id: id, total_price: "10.00", tags: ["a", "b"], ...extra });
    const one = shapeOf({ storeId: 1, records: [order("a")], customerKeys: ["k"] });
    expect(shapeOf({ storeId: 2, records: [order("b", { tags: [] })], customerKeys: ["l", "m"] })).toBe(one);
    // Some records, many (a batch's), or one: three shapes.
    const some = shapeOf({ storeId: 1, records: [order("a"), order("b")] });
    const many = shapeOf({ storeId: 1, records: Array.from({ length: 51 }, (_, i) => order(String(i))) });
    expect(new Set([shapeOf({ storeId: 1, records: [order("a")] }), some, many]).size).toBe(3);
    expect(shapeOf({ storeId: 1, records: Array.from({ length: 50 }, (_, i) => order(String(i))) })).toBe(some);
    // Another field, or the same fields in another order: another shape; a field left undefined is absent.
    expect(shapeOf({ storeId: 1, records: [order("a", { currency: "EUR" })] })).not.toBe(shapeOf({ storeId: 1, records: [order("a")] }));
    expect(shapeOf({ a: 1, b: 2 })).not.toBe(shapeOf({ b: 2, a: 1 }));
    expect(shapeOf({ a: 1, b: undefined })).toBe(shapeOf({ a: 1 }));
  });
});
