import type { z } from "zod";
import type { $ZodArray, $ZodCheck, $ZodNullable, $ZodObject, $ZodOptional, $ZodType } from "zod/v4/core";

/*
 * What a schema makes of a body it accepts, found without zod's bookkeeping.
 * zod runs every field in a result of its own (a value and a list of issues),
 * which is most of what checking a body allocates (a string with one check,
 * some 144 bytes); a body that passes needs none of it. The schema's own
 * objects, arrays, optional and nullable fields are walked here as zod walks
 * them, and every other schema (a string, a number, a format, a refinement,
 * an enum) is run by zod itself, in one result reused for the body's every
 * field. Anything refused, or not sure, is left to zod, which then names
 * each failing field: what comes back for a body is exactly what
 * `schema.safeParse` makes of it, or nothing.
 */

/** A field's run: reused for every field of one body. */
type Run = { value: unknown; issues: unknown[] };
/** Not accepted, or not known to be: zod decides. */
const UNSURE: unique symbol = Symbol("unsure");
type Walk = (value: unknown, run: Run) => unknown;

const CONTEXT = { async: false } as const;
const walks = new WeakMap<$ZodType, Walk>();

/** The value `schema.safeParse(value)` answers, when it accepts it; `undefined` when it may not. */
export function acceptedValue<S extends z.ZodType>(schema: S, value: unknown): { value: z.output<S> } | undefined {
  const out = walkOf(schema)(value, { value: undefined, issues: [] });
  return out === UNSURE ? undefined : { value: out as z.output<S> };
}

/** Schemas whose walks are being made: one met again inside itself holds itself (a recursive shape). */
const making = new Set<$ZodType>();

function walkOf(schema: $ZodType): Walk {
  const known = walks.get(schema);
  if (known) return known;
  // Where a schema recurs inside itself, zod runs it.
  if (making.has(schema)) return leafWalk(schema);
  making.add(schema);
  try {
    const walk = walkFor(schema);
    walks.set(schema, walk);
    return walk;
  } finally {
    making.delete(schema);
  }
}

function walkFor(schema: $ZodType): Walk {
  const internals = schema._zod;
  const checks = internals.def.checks ?? [];
  const { traits } = internals;
  if (traits.has("$ZodObject") && checks.length === 0 && !(schema as $ZodObject)._zod.def.catchall) return objectWalk(schema as $ZodObject);
  if (traits.has("$ZodArray")) return arrayWalk(schema as $ZodArray, checks);
  if (traits.has("$ZodOptional") && !traits.has("$ZodExactOptional") && checks.length === 0) {
    const inner = (schema as $ZodOptional)._zod.def.innerType;
    // An inner schema with a default substitutes it for absence: zod's to run.
    if (inner._zod.optin !== "defaulted") {
      const walk = walkOf(inner);
      return (value, run) => (value === undefined ? undefined : walk(value, run));
    }
  }
  if (traits.has("$ZodNullable") && checks.length === 0) {
    const walk = walkOf((schema as $ZodNullable)._zod.def.innerType);
    return (value, run) => (value === null ? null : walk(value, run));
  }
  return leafWalk(schema);
}

/**
 * Any other schema, by zod's own parse and checks (the schema itself first when it is one, as a refinement is),
 * in the one run: what zod's `run` does, less a result and a list of issues made for each.
 */
function leafWalk(schema: $ZodType): Walk {
  const internals = schema._zod;
  const checks = [...(internals.def.checks ?? [])];
  if (internals.traits.has("$ZodCheck")) checks.unshift(schema as unknown as $ZodCheck<never>);
  return (value, run) => {
    const result = internals.parse(holding(run, value) as Parameters<typeof internals.parse>[0], CONTEXT);
    if (result instanceof Promise || result.issues.length > 0) return UNSURE;
    return passes(checks, result) ? result.value : UNSURE;
  };
}

/** The run, holding `value` and no issues (a field before it may have left some, when it was optional and absent). */
function holding(run: Run, value: unknown): Run {
  run.value = value;
  if (run.issues.length > 0) run.issues = [];
  return run;
}

/** Whether a parsed value passes its schema's checks (each run when it applies, as zod runs them). */
function passes(checks: ReadonlyArray<$ZodCheck<never>>, run: Run): boolean {
  for (const check of checks) {
    const when = check._zod.def.when;
    if (when && !when(run as Parameters<typeof when>[0])) continue;
    if (check._zod.check(run as Parameters<(typeof check)["_zod"]["check"]>[0]) instanceof Promise || run.issues.length > 0) return false;
  }
  return true;
}

/** An object as zod's object reads one (its shape's keys, in order; others dropped): see zod's `handlePropertyResult`. */
function objectWalk(schema: $ZodObject): Walk {
  const { shape } = schema._zod.def;
  const fields = Object.keys(shape)
    .filter((key) => key !== "__proto__")
    .map((key) => {
      const field = shape[key] as $ZodType;
      return { key, walk: walkOf(field), optin: field._zod.optin, optout: field._zod.optout };
    });
  return (value, run) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return UNSURE;
    const input = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const { key, walk, optin, optout } of fields) {
      const present = key in input;
      if (!present && optout === "optional" && optin === "optional") continue;
      const field = walk(input[key], run);
      if (field === UNSURE) {
        if (optin !== undefined && optout === "optional" && !present) continue;
        return UNSURE;
      }
      if (!present && optin === undefined) return UNSURE;
      if (field !== undefined) out[key] = field;
      else if (present || (optin === "defaulted" && optout !== "optional")) out[key] = undefined;
    }
    return out;
  };
}

/** An array as zod's reads one: each element, then the array's own checks (its length) on what they made. */
function arrayWalk(schema: $ZodArray, checks: ReadonlyArray<$ZodCheck<never>>): Walk {
  const element = walkOf(schema._zod.def.element);
  return (value, run) => {
    if (!Array.isArray(value)) return UNSURE;
    const out = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      const item = element(value[index], run);
      if (item === UNSURE) return UNSURE;
      out[index] = item;
    }
    if (checks.length === 0) return out;
    return passes(checks, holding(run, out)) ? run.value : UNSURE;
  };
}
