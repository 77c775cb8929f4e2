import { sql, type InsertQueryBuilder, type InsertResult, type OnConflictBuilder, type QueryCreator, type RawBuilder } from "kysely";
import type { ValueOf } from "./statement.js";
import type { Database, Executor, Trx } from "./types.js";

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

/** The one parameter that carries a column's values: `text[]` columns as JSON (arrays of arrays must be rectangular), the rest as they are. */
export function arrayParameter(type: string, values: readonly unknown[]): unknown[] {
  return type === "text[]" ? values.map((value) => (value == null ? null : JSON.stringify(value))) : [...values];
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
 * A `text[]` column travels as JSON (see `arrayParameter`). One row (every
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
  const names = columns.map((column) => sql.id(column.name));
  const rows = one
    ? sql`(select ${sql.join(columns.map((column) => sql`${parameterOf(column)}::${sql.raw(column.type)} as ${sql.id(column.name)}`))}, 1::bigint as ordinal) as r`
    : sql`unnest(${sql.join(columns.map((column) => sql`${parameterOf(column)}::${sql.raw(isList(column) ? "jsonb" : column.type)}[]`))}) with ordinality as r(${sql.join(names)}, ordinal)`;
  const picked = columns.map((column) =>
    isList(column) && !one
      ? sql`case when ${sql.ref(`r.${column.name}`)} is not null then array(select jsonb_array_elements_text(${sql.ref(`r.${column.name}`)})) end`
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
