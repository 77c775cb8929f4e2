import type { RawBuilder } from "kysely";
import { textArray } from "../db/sql.js";
import { uniqueTags } from "./customers/customer.service.js";

/**
 * The merge rule of every upsert and PATCH, for the optional fields most
 * records share: present replaces, `null` clears, absent keeps (is left out).
 */
export type SharedOptional = {
  currency?: string | null | undefined;
  tags?: readonly string[] | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  line_items?: ReadonlyArray<Record<string, unknown>> | null | undefined;
};

export type SharedOptionalColumns = {
  currency?: string | null;
  tags?: RawBuilder<string[]>;
  metadata?: string | null;
  line_items?: string | null;
};

export function sharedOptionalColumns(input: SharedOptional): SharedOptionalColumns {
  const columns: SharedOptionalColumns = {};
  if (input.currency !== undefined) columns.currency = input.currency === null ? null : input.currency.toUpperCase();
  if (input.tags !== undefined) columns.tags = textArray(uniqueTags(input.tags));
  if (input.metadata !== undefined) columns.metadata = input.metadata === null ? null : JSON.stringify(input.metadata);
  if (input.line_items !== undefined) columns.line_items = input.line_items === null ? null : JSON.stringify(input.line_items);
  return columns;
}

/** The given fields that are not `undefined`: what a merge writes. */
export function presentOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
