import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isStalePlan, openDatabase, type DatabaseHandle } from "./index.js";
import { checkStatements, shapeOf, statement, unnestRows, type ValueOf } from "./sql.js";
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

describe("statements prepared once per session", () => {
  /** A session of its own (the embedded database has one): what it prepared is read from `pg_prepared_statements`. */
  const oneSession = async () =>
    database.url === undefined ? { db: handle.db, close: () => Promise.resolve() } : await openDatabase({ kind: "postgres", url: database.url, poolSize: 1 });
  const preparedLike = async (db: DatabaseHandle["db"], pattern: string) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like ${pattern}`.execute(db)).rows.map((row) => row.statement);

  it("hold a set-based statement's one text for any number of rows, lists and JSON among its columns, and not a list of values", async () => {
    const session = await oneSession();
    try {
      const rows = (count: number) =>
        unnestRows(
          [],
          [
            { name: "external_id", type: "text", values: Array.from({ length: count }, (_, i) => `k${i}`) },
            { name: "probe_tags", type: "text[]", values: Array.from({ length: count }, (_, i) => [`t${i}`]) },
            { name: "probe_body", type: "jsonb", values: Array.from({ length: count }, (_, i) => ({ n: i })) },
          ],
        );
      for (const count of [2, 3, 5]) {
        const read = await sql<{ external_id: string; probe_body: unknown }>`select r.external_id, r.probe_body from (${rows(count)}) as r`.execute(session.db);
        expect(read.rows.map((row) => row.probe_body)).toEqual(Array.from({ length: count }, (_, n) => ({ n })));
      }
      // One statement, prepared at its first run and reused by the next two (its columns' names are this test's alone).
      const prepared = await preparedLike(session.db, "%probe_body%");
      expect(prepared).toHaveLength(1);
      expect(prepared[0]).toContain("jsonb_array_elements_text(");

      // A list of values has a text per length: planned at each run, never kept.
      for (const count of [2, 3]) {
        const list = sql.join(Array.from({ length: count }, (_, i) => sql`(${i}::int, ${`v${i}`}::text)`));
        expect((await sql`select * from (values ${list}) as v(probe_a, probe_b)`.execute(session.db)).rows).toHaveLength(count);
      }
      expect(await preparedLike(session.db, "%probe_a%")).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it("keep the statements in use prepared past a session's room, letting go those least recently run", async () => {
    // Texts of their own (each with its number in it), as shapes a server meets over a session's life.
    checkStatements(false);
    const session = await oneSession();
    const run = async (n: number, value: number) => {
      const { rows } = await sql<Record<string, number>>`select ${value}::int + ${sql.raw(String(n))} as ${sql.raw(`probe_room_${n}`)}`.execute(session.db);
      expect(rows).toEqual([{ [`probe_room_${n}`]: value + n }]);
    };
    const prepared = async (n: number) => (await preparedLike(session.db, `%probe_room_${n}`)).length;
    try {
      await run(0, 1);
      // 250 more texts, the first one run again after every 20 of them: the one in use.
      for (let n = 1; n <= 250; n++) {
        await run(n, n);
        if (n % 20 === 0) await run(0, n);
      }
      const { rows } = await sql<{ held: number }>`select count(*)::int as held from pg_prepared_statements`.execute(session.db);
      expect(rows[0]?.held).toBeLessThanOrEqual(200);
      expect(await prepared(0)).toBe(1);
      expect(await prepared(250)).toBe(1);
      expect(await prepared(1)).toBe(0);
      // One let go runs again, prepared anew.
      await run(1, 7);
      await run(1, 8);
      expect(await prepared(1)).toBe(1);
    } finally {
      await session.close();
    }
  });

  it("let go a statement whose plan went stale inside a transaction, once the transaction is over", async () => {
    const session = await oneSession();
    const read = (db: DatabaseHandle["db"]) => sql<{ id: number; added?: string | null }>`select * from probe_stale where id = ${1}`.execute(db);
    try {
      await sql.raw("create table probe_stale (id int primary key)").execute(session.db);
      await sql.raw("insert into probe_stale values (1)").execute(session.db);
      expect((await read(session.db)).rows).toEqual([{ id: 1 }]);
      // The table changes shape under the prepared statement, and a transaction is the first to run it again.
      await sql.raw("alter table probe_stale add column added text").execute(session.db);
      const failed = await session.db.transaction().execute((trx) => read(trx)).then(() => undefined, (error: unknown) => error);
      expect(isStalePlan(failed)).toBe(true);
      expect((await read(session.db)).rows).toEqual([{ id: 1, added: null }]);
      // Prepared anew, and the stale one let go: the session holds one statement of that text, not two.
      expect(await preparedLike(session.db, "%probe_stale where%")).toHaveLength(1);
    } finally {
      await sql.raw("drop table if exists probe_stale").execute(session.db);
      await session.close();
    }
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

describe("a column's values sent as one array parameter", () => {
  const awkward = ["plain", "", "NULL", "null", 'with "quotes"', "back\\slash", 'both \\" at once', "a,b", "{braces}", " spaced ", "tab\there", "new\nline", "ünïcode 😀", null];
  /** The rows `unnestRows` makes of `columns` (each row's key its index), as the database answers them. */
  const unnested = async (columns: Record<string, { type: string; values: readonly unknown[] }>, picked = sql`r.*`) => {
    const count = Object.values(columns)[0]?.values.length ?? 0;
    const keys = Array.from({ length: count }, (_, index) => String(index).padStart(3, "0"));
    const rows = unnestRows([], [{ name: "external_id", type: "text", values: keys }, ...Object.entries(columns).map(([name, column]) => ({ name, ...column }))]);
    return (await sql<Record<string, unknown>>`select ${picked} from (${rows}) as r`.execute(handle.db)).rows;
  };

  it("arrive exactly as given, whatever characters they hold, on the database in use", async () => {
    expect((await unnested({ v: { type: "text", values: awkward } })).map((row) => row.v)).toEqual(awkward);
    // Text with nothing to escape, and no null among it (a column's usual values), arrives as given too.
    const plain = awkward.filter((value): value is string => value !== null && !/["\\]/.test(value));
    expect((await unnested({ v: { type: "text", values: plain } })).map((row) => row.v)).toEqual(plain);
    const numbers = { amount: { type: "numeric", values: ["129.90", 0.5, -3, 1e21] }, id: { type: "bigint", values: [9007199254740993n, 7, -1, 0] }, flag: { type: "boolean", values: [true, false, true, false] } };
    expect(await unnested(numbers, sql`r.amount::text as amount, r.id::text as id, r.flag`)).toEqual([
      { amount: "129.90", id: "9007199254740993", flag: true },
      { amount: "0.5", id: "7", flag: false },
      { amount: "-3", id: "-1", flag: true },
      { amount: "1000000000000000000000", id: "0", flag: false },
    ]);
    // Lists of tags and objects travel as JSON: what they hold arrives as it was, and a null is SQL's null.
    const lists = [["a", 'b"c', "d\\e"], [], null, ["NULL", "{x}"]];
    expect((await unnested({ v: { type: "text[]", values: lists } })).map((row) => row.v)).toEqual(lists);
    // A jsonb value given as an object is its JSON; given as text, the JSON that text is (a list's, a string's).
    const objects = [{ note: 'say "hi"\\', n: 1, nested: { list: [1, "two"] } }, null, {}, undefined, '[{"sku":"A\\"1"}]', '"just text"', "null"];
    expect(await unnested({ v: { type: "jsonb", values: objects } }, sql`r.v, r.v is null as missing, jsonb_typeof(r.v) as kind`)).toEqual([
      { v: objects[0], missing: false, kind: "object" },
      { v: null, missing: true, kind: null },
      { v: {}, missing: false, kind: "object" },
      { v: null, missing: true, kind: null },
      { v: [{ sku: 'A"1' }], missing: false, kind: "array" },
      { v: "just text", missing: false, kind: "string" },
      { v: null, missing: false, kind: "null" },
    ]);
    // Text that is not JSON is refused, as pg's own parameters refuse it, never taken for more than one value.
    await expect(unnested({ v: { type: "jsonb", values: ['1"], ["2'] } })).rejects.toThrow(/json/i);
    // Times as instants, numbers and flags as their text.
    const times = [new Date(Date.UTC(2026, 10, 20, 14, 3, 0, 120)), "2026-11-20T16:03:00+02:00", null];
    expect(await unnested({ v: { type: "timestamptz", values: times } }, sql`to_char(r.v at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as v`)).toEqual([
      { v: "2026-11-20T14:03:00.120" },
      { v: "2026-11-20T14:03:00.000" },
      { v: null },
    ]);
    const scalars = { amount: { type: "numeric", values: ["129.90", 0.5, null] }, id: { type: "bigint", values: [9007199254740993n, 7, null] }, flag: { type: "boolean", values: [true, false, null] } };
    expect(await unnested(scalars, sql`r.amount::text as amount, r.id::text as id, r.flag`)).toEqual([
      { amount: "129.90", id: "9007199254740993", flag: true },
      { amount: "0.5", id: "7", flag: false },
      { amount: null, id: null, flag: null },
    ]);
  });
});
