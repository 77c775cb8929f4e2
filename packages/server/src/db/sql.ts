import { isDeepStrictEqual } from "node:util";
import { Decimal } from "decimal.js";
import {
  createQueryId,
  sql,
  type CompiledQuery,
  type InsertQueryBuilder,
  type InsertResult,
  type OnConflictBuilder,
  type QueryCreator,
  type QueryExecutorProvider,
  type RawBuilder,
  type Transaction,
} from "kysely";
import pg from "pg";
import type { Database, Db, Executor, Trx } from "./types.js";

/*
 * What the repositories write SQL with: helpers for the statements the
 * records share, statements built once per shape (`statement`), transactions
 * retried on what PostgreSQL asks to retry (`inTransaction`), and values read
 * and written as the contract spells them (money, timestamps, bigint ids).
 */

// --- SQL the records share ---

/** A text[] value written the same way on PostgreSQL and the embedded database. */
export function textArray(values: readonly string[]): RawBuilder<string[]> {
  return values.length === 0 ? sql<string[]>`'{}'::text[]` : sql<string[]>`array[${sql.join(values)}]::text[]`;
}

export const now = (): RawBuilder<Date> => sql<Date>`now()`;

/**
 * `= any($1::bigint[])` for a column compared with a list of ids: the same
 * statement text whatever the list's length, so PostgreSQL plans it once per
 * connection (a list `in ($1, $2, ...)` is a new statement at each length).
 */
export const anyId = (ids: readonly number[]): RawBuilder<number> => sql<number>`any(${[...ids]}::bigint[])`;

/**
 * A column of rows passed as one array: its SQL type, and each row's value, or
 * the array itself as `arrayParameter` makes it (a statement compiled once per
 * shape passes it as a value of the run, see `statement`).
 */
export type ArrayColumn = { name: string; type: string } & ({ values: readonly unknown[] } | { parameter: unknown; one?: boolean });

/**
 * The one parameter that carries a column's values: for a column that travels
 * as JSON, a JSON array made by one native call, with nothing escaped in
 * JavaScript (a `text[]` column's lists as they are, a `jsonb` column's values
 * as their JSON text, which is what a string is taken for, as pg takes it);
 * else PostgreSQL's array literal (see `arrayLiteral`). `unnestRows` takes
 * either apart.
 */
export function arrayParameter(type: string, values: readonly unknown[]): string | unknown[] {
  if (type === "text[]") return JSON.stringify(values.map((value) => value ?? null));
  if (type === "jsonb") return JSON.stringify(values.map((value) => (value == null ? null : typeof value === "string" ? value : JSON.stringify(value))));
  return arrayLiteral(values);
}

/** What an element's text must have escaped inside an array literal's quotes. */
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED_IN_ELEMENT = /["\\]/g;

/**
 * A list of scalars as the array literal pg would send for it (`{"a","b",NULL}`; a date as its ISO instant),
 * made in one pass: pg's own serializer builds it with two regular-expression replaces and a new string per
 * element: a sixth of what an orders import allocates. A list of text with nothing to escape, numbers and
 * flags (a column's usual values) is joined by one native call. Anything else (an object, a nested list, a
 * buffer) is left to pg, as the list itself.
 */
function arrayLiteral(values: readonly unknown[]): string | unknown[] {
  let plain = values.length > 0;
  for (let index = 0; plain && index < values.length; index++) {
    const value = values[index];
    const type = typeof value;
    plain = type === "number" || type === "boolean" || type === "bigint" || (type === "string" && !NEEDS_ESCAPE.test(value as string));
  }
  if (plain) return `{"${values.join('","')}"}`;
  let literal = "{";
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    let text: string;
    if (value === null || value === undefined) {
      literal += index === 0 ? "NULL" : ",NULL";
      continue;
    } else if (typeof value === "string") text = value;
    else if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") text = String(value);
    else if (value instanceof Date) text = value.toISOString();
    else return [...values];
    const quoted = NEEDS_ESCAPE.test(text) ? `"${text.replace(ESCAPED_IN_ELEMENT, "\\$&")}"` : `"${text}"`;
    literal += index === 0 ? quoted : `,${quoted}`;
  }
  return `${literal}}`;
}

/**
 * The columns `names` of the rows a run's arguments carry (`rowsOf`), each
 * passed as one array, by `value`, for a statement compiled once per shape
 * (see `unnestRows` and `statement`); `types` gives each column's SQL type.
 */
export function arrayColumns<A, N extends string>(
  value: ValueOf<A>,
  types: Record<N, string>,
  names: readonly N[],
  rowsOf: (args: A) => ReadonlyArray<Partial<Record<N, unknown>>>,
  one = false,
): ArrayColumn[] {
  if (one) return names.map((name) => ({ name, type: types[name], parameter: value((args) => rowsOf(args)[0]?.[name]), one }));
  return names.map((name) => ({ name, type: types[name], parameter: value((args) => arrayParameter(types[name], rowsOf(args).map((row) => row[name]))) }));
}

/**
 * One row's values for a statement compiled once per shape: each of
 * `columns` of the row a run's arguments carry (`rowOf`), by `value`; a
 * `text[]` column (see `types`) passed as a list.
 */
export function rowValues<A, N extends string>(value: ValueOf<A>, types: Record<N, string>, columns: readonly N[], rowOf: (args: A) => Partial<Record<N, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    columns.map((column) => [column, types[column] === "text[]" ? sql`${value((args) => rowOf(args)[column])}::text[]` : value((args) => rowOf(args)[column])]),
  );
}

/**
 * What `unnestRows` adds to link each row to a row of the statement's CTE
 * `cte` by its `external_id`: `keys` (an array of the rows' keys, in their
 * order) joined by ordinality, and the linked row's id selected after the columns.
 */
export function linkedByKey(keys: unknown, cte: string): { trailing: ReadonlyArray<RawBuilder<unknown>>; join: RawBuilder<unknown> } {
  return {
    trailing: [sql.ref(`${cte}.id`)],
    join: sql`join unnest(${keys}::text[]) with ordinality as k(key, n) on k.n = r.ordinal join ${sql.table(cte)} on ${sql.ref(`${cte}.external_id`)} = k.key`,
  };
}

/**
 * `select <leading>, <columns> from unnest($1::type[], $2::type[], ...)`: many
 * rows in one parameter per column, in the order of their key (`external_id`,
 * or else the first column, a contact's phone): the lock order's, so that two
 * statements writing some of the same rows lock them in the same order, never
 * each waiting for the other (see `docs/architecture.md`). The statement's text
 * is the same for any number of rows, so PostgreSQL parses and plans it once
 * per connection, and its parameters are a dozen arrays, not one per value.
 * A `text[]` or `jsonb` column travels as JSON (see `arrayParameter`). One row (every
 * column `one`: its parameter the row's own value) is selected from its
 * values alone, with no arrays to build, send and take apart: a push's.
 */
export function unnestRows(
  leading: ReadonlyArray<RawBuilder<unknown>>,
  columns: readonly ArrayColumn[],
  /** Selected after the columns, from what `join` adds to the rows `r`. */
  more: { trailing?: ReadonlyArray<RawBuilder<unknown>>; join?: RawBuilder<unknown> } = {},
): RawBuilder<never> {
  const isList = (column: ArrayColumn) => column.type === "text[]";
  const one = columns.length > 0 && columns.every((column) => "one" in column && column.one === true);
  const parameterOf = (column: ArrayColumn) => ("parameter" in column ? column.parameter : arrayParameter(column.type, column.values));
  // A column sent as a JSON array becomes the jsonb[] unnest zips with the others (a JSON null an SQL null): a list
  // is its element, a jsonb value the JSON its text element holds.
  const arrayOf = (column: ArrayColumn) =>
    isList(column)
      ? sql`(select array_agg(nullif(e.value, 'null') order by e.n) from jsonb_array_elements(${parameterOf(column)}::jsonb) with ordinality as e(value, n))`
      : column.type === "jsonb"
        ? sql`(select array_agg(e.value::jsonb order by e.n) from jsonb_array_elements_text(${parameterOf(column)}::jsonb) with ordinality as e(value, n))`
        : sql`${parameterOf(column)}::${sql.raw(column.type)}[]`;
  const names = columns.map((column) => sql.id(column.name));
  const rows = one
    ? sql`(select ${sql.join(columns.map((column) => sql`${parameterOf(column)}::${sql.raw(column.type)} as ${sql.id(column.name)}`))}, 1::bigint as ordinal) as r`
    : sql`unnest(${sql.join(columns.map(arrayOf))}) with ordinality as r(${sql.join(names)}, ordinal)`;
  const picked = columns.map((column) =>
    isList(column) && !one
      ? sql`case when ${sql.ref(`r.${column.name}`)} is not null then array(select jsonb_array_elements_text(${sql.ref(`r.${column.name}`)})) end as ${sql.id(column.name)}`
      : sql.ref(`r.${column.name}`),
  );
  const key = columns.find((column) => column.name === "external_id") ?? columns[0];
  const order = key ? sql`${sql.ref(`r.${key.name}`)}, r.ordinal` : sql`r.ordinal`;
  return sql<never>`select ${sql.join([...leading, ...picked, ...(more.trailing ?? [])])}
    from ${rows} ${more.join ?? sql``} order by ${order}`;
}

type SourcedTable = "customers" | "orders" | "checkouts" | "shipments";

/**
 * An upsert's update applies unless both the write and the stored row say when
 * the shop changed the record and the write's time is older: a webhook that
 * arrives late changes nothing.
 */
export function notStale(table: SourcedTable): RawBuilder<boolean> {
  const stored = sql.ref(`${table}.source_updated_at`);
  return sql<boolean>`(${stored} is null or excluded.source_updated_at is null or excluded.source_updated_at >= ${stored})`;
}

/** The same rule for an UPDATE (a PATCH) with the write's time as a value. */
export function notStaleFor(sourceUpdatedAt: string | undefined): RawBuilder<boolean> {
  return sourceUpdatedAt === undefined ? sql<boolean>`true` : sql<boolean>`(source_updated_at is null or source_updated_at <= ${sourceUpdatedAt}::timestamptz)`;
}

/** The columns every write of a record upsert carries (they all carry the same), beyond its key. */
export function carriedColumns<W extends object>(writes: readonly W[]): Exclude<keyof W & string, "external_id">[] {
  return Object.keys(writes[0] ?? {}).filter((column) => column !== "external_id") as Exclude<keyof W & string, "external_id">[];
}

/**
 * A CTE's query creator as one over the database's tables: the CTEs of a
 * push's statement build on those tables (and name the earlier CTEs in raw SQL only).
 */
export const overTables = (qc: unknown): QueryCreator<Database> => qc as QueryCreator<Database>;

/**
 * What a record upsert's update sets: each column the write carries, from
 * `excluded` (absent ones keep their stored value); the stored source time
 * unless the write brings one; `updated_at`.
 */
export function mergedColumns(table: SourcedTable, columns: readonly string[]) {
  return {
    ...Object.fromEntries(columns.map((column) => [column, sql.ref(`excluded.${column}`)])),
    source_updated_at: keptSourceTime(table),
    updated_at: now(),
  };
}

/** The stored source time stays unless the write brings one. */
export function keptSourceTime(table: SourcedTable): RawBuilder<string | null> {
  return sql<string | null>`coalesce(excluded.source_updated_at, ${sql.ref(`${table}.source_updated_at`)})`;
}

/** The tables of pushed records a shop keys by its own id, per store. */
type RecordTable = "orders" | "checkouts" | "shipments";

/**
 * The upsert every record write makes: `rows` (see `unnestRows`) into `table`,
 * keyed by store and external id; a stored record takes `set` (see
 * `mergedColumns`) unless it is newer than the write (see `notStale`). The
 * caller says what it returns.
 */
export function upsertRecords<T extends RecordTable>(
  qc: QueryCreator<Database>,
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string>,
  rows: RawBuilder<never>,
  set: Parameters<OnConflictBuilder<Database, T>["doUpdateSet"]>[0],
): InsertQueryBuilder<Database, T, InsertResult> {
  return qc
    .insertInto(table)
    .columns(columns)
    .expression(rows)
    .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(set).where(notStale(table)));
}

/** True on the row an `insert ... on conflict do update` inserted, false on the one it updated. */
export const wasInserted = sql<boolean>`(xmax = 0)`;

/**
 * Runs `work` so that a failure undoes only its own statements. A failure
 * `expected` says is part of the plan answers `undefined`; any other is passed
 * on (a deadlock or a timeout then still fails the transaction).
 */
export async function inSavepoint<T>(db: Trx, name: string, work: () => Promise<T>, expected: (error: unknown) => boolean): Promise<T | undefined> {
  await sql.raw(`savepoint ${name}`).execute(db);
  try {
    const result = await work();
    await sql.raw(`release savepoint ${name}`).execute(db);
    return result;
  } catch (error) {
    if (!expected(error)) {
      // Undone all the same, so a caller that carries on finds the transaction usable; should the database itself be gone, the first error is the one to report.
      await sql.raw(`rollback to savepoint ${name}`).execute(db).catch(() => {});
      throw error;
    }
    await sql.raw(`rollback to savepoint ${name}`).execute(db);
    return undefined;
  }
}

/** PostgreSQL's foreign_key_violation. */
export const isForeignKeyViolation = (error: unknown): boolean => error instanceof Error && "code" in error && error.code === "23503";

/**
 * True, or fails the whole statement (undoing every write it made) with a
 * stale write when `fresh` is false: a push written in one statement checks
 * with it that its record was not older than the stored one.
 */
export const freshOrFail = (fresh: RawBuilder<boolean>): RawBuilder<boolean> => sql<boolean>`fresh_or_fail(${fresh})`;

/**
 * What a write statement answers: the rows its CTE `cte` wrote, as the rows
 * they are (`Row`), each with `fresh`, a check that fails the statement with
 * a stale write (`freshOrFail`) when the statement is `strict` and `cte`
 * wrote fewer rows than it was given (`records`): a write of many records
 * fails whole when one is not written. The rows are read as `checked left
 * join <cte>`: the check runs once (`offset 0` keeps the planner from moving
 * it into every row), and even when nothing was written (that row's columns
 * are null: see `written`).
 */
export function writtenRows<Row, A extends { strict: boolean }>(value: ValueOf<A>, cte: string, records: (args: A) => number) {
  const strict = value((args) => args.strict);
  const given = value(records);
  const fresh = freshOrFail(sql<boolean>`(not ${strict}::boolean or (select count(*) from ${sql.table(cte)}) = ${given}::bigint)`);
  return sql<Row & { fresh: boolean }>`(select w.*, checked.fresh from (select ${fresh} as fresh offset 0) as checked left join ${sql.table(cte)} as w on true)`.as("answer");
}

/**
 * The columns a write statement answers of each record it wrote (see
 * `writtenRows`): those of its record (`columns`, with its `id` and
 * `external_id`) and whether it created it; or, when its caller reads no
 * more than that (`statusesOnly`: an import's chunk, which keeps counts),
 * the id, the key and `inserted` alone, so that no time, amount or list is
 * sent back, parsed and dropped.
 */
export function answerColumns<C extends string>(columns: readonly C[], statusesOnly: boolean | undefined): Array<C | "inserted"> {
  return statusesOnly ? [...columns.filter((column) => column === "id" || column === "external_id"), "inserted"] : [...columns, "inserted"];
}

/**
 * A write statement's written rows (see `writtenRows`), as the table's rows
 * they are: the one row of nulls that says nothing was written left out.
 */
export function written<Row>(rows: ReadonlyArray<Row & { id: unknown }>): Row[] {
  return rows.filter((row) => row.id !== null);
}

/** The failure `freshOrFail` raises. */
export const isStaleWriteError = (error: unknown): boolean => error instanceof Error && "code" in error && error.code === "P0S01";

/**
 * Of these pushes, the keys whose stored record says it changed after the
 * push's time (`source_updated_at`): they will not be applied, so a batch
 * writes nothing for them, as a push of each alone would not. A stored time
 * never goes back, so what this finds stale stays stale.
 */
export async function olderThanStored(
  db: Executor,
  table: "orders" | "checkouts" | "customers",
  storeId: number,
  pushes: ReadonlyArray<{ external_id: string; source_updated_at?: string | undefined }>,
): Promise<Set<string>> {
  const timed = pushes.flatMap((push) => (push.source_updated_at === undefined ? [] : [sql`(${push.external_id}::text, ${push.source_updated_at}::timestamptz)`]));
  if (timed.length === 0) return new Set();
  const { rows } = await sql<{ external_id: string }>`
    select push.external_id from (values ${sql.join(timed)}) as push(external_id, time)
    join ${sql.table(table)} as stored on stored.store_id = ${storeId} and stored.external_id = push.external_id
    where stored.source_updated_at > push.time ${table === "customers" ? sql`and stored.deleted_at is null` : sql``}`.execute(db);
  return new Set(rows.map((row) => row.external_id));
}

// --- Statements built once per shape ---

const PICK = Symbol("statement value");
/** A value of a statement while it is built: where in it the value goes, and how a run finds it. */
type Placeholder<A> = { readonly [PICK]: (args: A) => unknown };
const isPlaceholder = <A>(parameter: unknown): parameter is Placeholder<A> => typeof parameter === "object" && parameter !== null && PICK in parameter;

/**
 * Declares one of a statement's values: at each run, what `pick` finds in the
 * run's arguments. Typed as the value itself, so it goes wherever kysely takes one.
 */
export type ValueOf<A> = <V>(pick: (args: A) => V) => V;

/** What `build` gives: a query builder or a raw `sql` statement, compiled against the database. */
type Buildable<R> = { compile(executor: QueryExecutorProvider): CompiledQuery<R> };

type Compiled<A> = { sql: string; query: CompiledQuery["query"]; picks: ReadonlyArray<(args: A) => unknown> };

/** The most shapes one statement keeps compiled; beyond them (never, with the shapes the service writes), a run compiles for itself. */
const SHAPES_KEPT = 256;

/** When on, every run also builds its statement with its own values and compares (see `checkStatements`). */
let checking = false;

/**
 * Has every statement made by `statement` also be built from its run's own
 * values, as kysely would build it for that run alone, and compared with the
 * statement it ran: a different text or different values fail the run. For
 * the test suites, which so prove that each statement's text depends on its
 * arguments' shape alone (see `shapeOf`).
 */
export function checkStatements(on: boolean): void {
  checking = on;
}

/**
 * The most rows of a list that count as "some" in a statement's shape (see
 * `shapeOf`); past it, "many": a statement may plan a few rows one way and a
 * batch's another (see `MOST_ORDERS_BY_ID`).
 */
export const SOME_ROWS = 50;

/**
 * What a statement's text may depend on, read off its run's arguments
 * themselves, with no key written by hand: the keys each object has (in their
 * order; a key whose value is `undefined` is absent) and, for each list of
 * objects (records), the keys of its first one (every record of a statement
 * carries the same fields) and how many it holds: one, some or many (see
 * `SOME_ROWS`). Values never count, nor do lists of values (keys, tags).
 */
export function shapeOf(args: unknown): string {
  if (Array.isArray(args)) {
    const [first] = args as unknown[];
    if (first === null || typeof first !== "object") return "";
    return `[${args.length === 1 ? "1" : args.length > SOME_ROWS ? "+" : ""}${shapeOf(first)}]`;
  }
  if (args === null || typeof args !== "object") return "";
  let shape = "{";
  for (const [key, value] of Object.entries(args)) if (value !== undefined) shape += `${key}${shapeOf(value)},`;
  return `${shape}}`;
}

/**
 * A statement kysely builds and compiles once per shape, then runs with each
 * call's values: building a statement of a dozen CTEs and compiling it to text
 * costs more of the service's CPU than sending it and reading its answer.
 *
 * `build` makes the statement from the database, `value` and the arguments.
 * It may read of the arguments only their shape (see `shapeOf`: which fields
 * they carry, how many records), never a value: every value goes in through
 * `value(args => ...)`. A value met directly is refused when the statement is
 * compiled (it would be the first run's at every run). Runs are the same as
 * kysely's own: the text and values it would have sent, through the same
 * executor (its transaction, its connection's prepared statements).
 */
export function statement<A, R>(build: (db: Executor, value: ValueOf<A>, args: A) => Buildable<R>): (db: Executor, args: A) => Promise<R[]> {
  const shapes = new Map<string, Compiled<A>>();
  const placeholder: ValueOf<A> = (pick) => ({ [PICK]: pick }) as Placeholder<A> as never;

  function compile(db: Executor, args: A): Compiled<A> {
    const { sql, query, parameters } = build(db, placeholder, args).compile(db);
    const picks = parameters.map((parameter, index) => {
      if (!isPlaceholder<A>(parameter)) throw new Error(`value $${index + 1} of a statement compiled once per shape was not given by value(): ${sql}`);
      return parameter[PICK];
    });
    return { sql, query, picks };
  }

  return async (db, args) => {
    const shape = shapeOf(args);
    let compiled = shapes.get(shape);
    if (!compiled) {
      compiled = compile(db, args);
      if (shapes.size < SHAPES_KEPT) shapes.set(shape, compiled);
    }
    const parameters = compiled.picks.map((pick) => pick(args));
    if (checking) {
      const own = build(db, (pick) => pick(args), args).compile(db);
      if (own.sql !== compiled.sql || !isDeepStrictEqual(own.parameters, parameters)) {
        throw new Error(`a statement compiled once per shape differs from its run's own (shape ${shape}):\n${compiled.sql}\n${own.sql}`);
      }
    }
    const { rows } = await db.executeQuery<R>({ sql: compiled.sql, query: compiled.query, parameters, queryId: createQueryId() });
    return rows;
  };
}

/** The one row a statement always answers (a select of one row, say); `what` names the statement in the error should none come. */
export async function onlyRow<R>(rows: Promise<R[]>, what: string): Promise<R> {
  const [row] = await rows;
  if (!row) throw new Error(`${what} answered no row`);
  return row;
}

// --- Transactions and retries ---

/**
 * Statements and transactions this process ran again after PostgreSQL refused
 * them, by why (a deadlock, a serialization failure, a plan a migration made
 * stale, a lock or statement timeout, a lock order conflict): reported at /metrics. A steady count of deadlocks means two writers
 * take the same rows in different orders.
 */
export const retries = { deadlock: 0, serialization: 0, stale_plan: 0, timeout: 0, lock_order: 0 };

/**
 * PostgreSQL refuses a prepared statement whose result's shape changed since
 * it was planned. Known by the function that refuses it, which does not
 * depend on the server's language, or else by its English message.
 */
export const isStalePlan = (error: unknown): boolean =>
  error instanceof Error &&
  "code" in error &&
  error.code === "0A000" &&
  (("routine" in error && error.routine === "RevalidateCachedQuery") || /cached plan must not change result type/.test(error.message));

const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
/** A wait PostgreSQL cut short: lock_not_available (a lock timeout), query_canceled (the statement timeout). */
const TIMED_OUT = new Set(["55P03", "57014"]);
const ATTEMPTS = 8;

/**
 * A conflict the code found itself, to be run again as a deadlock is: what a
 * transaction read before taking its locks changed before it held them (see
 * the lock order in `docs/architecture.md`).
 */
export class LockOrderConflict extends Error {
  constructor(what: string) {
    super(`${what} changed while its locks were taken`);
    this.name = "LockOrderConflict";
  }
}

/**
 * How long a write may keep being retried after a statement or lock timeout:
 * the request deadline (see `configureRetries`). A wait the statement timeout
 * cut short is run again while the request can still be answered in time, so
 * that a shorter statement timeout never turns a write that would finish into
 * a 503; a frozen server is the client's read timeout, never retried here.
 */
let timeoutRetryBudgetMs = 15_000;

export function configureRetries(options: { timeoutBudgetMs: number }): void {
  timeoutRetryBudgetMs = options.timeoutBudgetMs;
}

const codeOf = (error: unknown) => (error instanceof Error && "code" in error ? String(error.code) : "");

function countRetry(error: unknown): void {
  const code = codeOf(error);
  if (code === "40P01") retries.deadlock++;
  else if (code === "40001") retries.serialization++;
  else if (TIMED_OUT.has(code)) retries.timeout++;
  else if (error instanceof LockOrderConflict) retries.lock_order++;
  else retries.stale_plan++;
}

/**
 * A failure that running the same work again can cure: a deadlock, a
 * serialization failure, a stale plan, a lock order conflict, a lock or
 * statement timeout (this last only while the request deadline allows: see
 * `retried`).
 */
export function isRetryable(error: unknown): boolean {
  return RETRYABLE.has(codeOf(error)) || isStalePlan(error) || error instanceof LockOrderConflict || isTimedOut(error);
}

const isTimedOut = (error: unknown) => TIMED_OUT.has(codeOf(error));

/**
 * For the rest of the caller's transaction, each prepared statement runs on its
 * one plan made for any values (the plan the plan tests hold to their indexes),
 * not on one made again for the run's values from the statistics of the moment:
 * a store an import had just begun to fill was one row to them, and each
 * customer's lookup by key read the store's customers through another index.
 * Set where many records are written at once (a batch, an import's chunk),
 * which is also where a plan made for each run costs most to make.
 */
export async function planForAnyValues(trx: Executor): Promise<void> {
  await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
}

/**
 * One request, one transaction: everything `work` writes commits together or
 * not at all. A transaction PostgreSQL aborts to break a deadlock, or for a
 * serialization failure, is run again (up to eight times, with jittered
 * backoff) rather than surfacing as a 500.
 *
 * Called inside a transaction (a batch stores its items in one), `work` runs
 * in a savepoint instead: when it fails, what it wrote is undone and the
 * surrounding transaction goes on; a retryable failure is left to the
 * outermost transaction, which runs again as a whole.
 */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? nested(db, work) : retried(() => db.transaction().execute(work));
}

/**
 * A write made in one statement, which is atomic by itself: outside a
 * transaction it needs none (no BEGIN and COMMIT round trips); inside one (a
 * batch) it runs in a savepoint, so that its failure undoes only itself. A
 * deadlock or serialization failure runs it again, as `inTransaction` does.
 */
export async function inStatement<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? nested(db, work) : retried(() => work(db));
}

function nested<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const trx = db as Transaction<Database>;
  // Nothing is an expected failure here: every one is undone and passed on.
  return inSavepoint(trx, "nested_write", () => work(trx), () => false) as Promise<T>;
}

async function retried<T>(run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      // A timed-out wait is run again only while the budget lasts: no attempt counts against it.
      const again = isTimedOut(error) ? Date.now() - started < timeoutRetryBudgetMs : attempt < ATTEMPTS && isRetryable(error);
      if (!again) throw error;
      countRetry(error);
      // Exponential with full jitter (5 ms doubling, capped at 200 ms): contenders spread apart instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
    }
  }
}

// --- Values as the contract spells them ---

const INT8 = 20;
const NUMERIC = 1700;
const INT8_ARRAY = 1016;

/**
 * How `pg` reads values: bigint ids and counts fit in a double here (ids stay far below 2^53), alone or in arrays, as on
 * the embedded database; money stays a string.
 */
export const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return (value: string) => Number(value);
    if (oid === INT8_ARRAY) {
      const parseArray = pg.types.getTypeParser(INT8_ARRAY as Parameters<typeof pg.types.getTypeParser>[0], "text") as (value: string) => Array<string | null>;
      return (value: string) => parseArray(value).map((item) => (item === null ? null : Number(item)));
    }
    if (oid === NUMERIC) return (value: string) => value;
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

/** The same reading on the embedded database (PGlite's parsers by type). */
export const embeddedParsers = { [INT8]: (value: string) => Number(value), [NUMERIC]: (value: string) => value };

/** A number's text with at most two decimals and no exponent: money as it is, nothing to round. */
const PLAIN_CENTS = /^\d+(?:\.(\d{1,2}))?$/;

/**
 * A JSON number as money: rounded half-up to two decimals in decimal
 * arithmetic (1.005 becomes "1.01", which binary floats would make "1.00").
 * The number's shortest round-trip text is the decimal the caller wrote; most
 * prices have two decimals or fewer and are only padded, the rest go through
 * decimal arithmetic.
 */
export function toMoney(value: number): string {
  const text = String(value);
  const plain = PLAIN_CENTS.exec(text);
  if (plain) {
    const decimals = plain[1]?.length ?? 0;
    return decimals === 2 ? text : decimals === 1 ? `${text}0` : `${text}.00`;
  }
  return new Decimal(text).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
}

/** A numeric column's text as the contract's money string: exactly two decimals. */
export function formatMoney(value: string): string {
  return new Decimal(value).toFixed(2);
}

/** The contract's timestamp format: ISO 8601, milliseconds, numeric offset, never `Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, "+00:00");
}

/** The same, for a time that may not be there. */
export function formatOptionalTimestamp(date: Date | null): string | null {
  return date ? formatTimestamp(date) : null;
}
