import { isDeepStrictEqual } from "node:util";
import { createQueryId, type CompiledQuery, type QueryExecutorProvider } from "kysely";
import type { Executor } from "./types.js";

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
