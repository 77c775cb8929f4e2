import { sql } from "kysely";
import type { Executor } from "../db/types.js";

export function insertTeam(db: Executor, name: string) {
  return db.insertInto("teams").values({ name }).returningAll().executeTakeFirstOrThrow();
}

export function listTeams(db: Executor) {
  return db.selectFrom("teams").selectAll().orderBy("id").execute();
}

export function findTeam(db: Executor, id: number) {
  return db.selectFrom("teams").selectAll().where("id", "=", id).executeTakeFirst();
}

export function insertStore(
  db: Executor,
  store: { team_id: number; name: string; country: string | null; recovery_delay_seconds?: number | undefined },
) {
  return db.insertInto("stores").values(store).returningAll().executeTakeFirstOrThrow();
}

export function updateStore(
  db: Executor,
  id: number,
  patch: { name?: string; country?: string | null; recovery_delay_seconds?: number; paused?: boolean; log_bodies?: boolean },
) {
  return db
    .updateTable("stores")
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export function findStore(db: Executor, id: number) {
  return db.selectFrom("stores").selectAll().where("id", "=", id).executeTakeFirst();
}

export function listStores(db: Executor, teamId: number | undefined) {
  let query = db.selectFrom("stores").selectAll().orderBy("id");
  if (teamId !== undefined) query = query.where("team_id", "=", teamId);
  return query.execute();
}

export function insertApiKey(
  db: Executor,
  key: { team_id: number; store_id: number | null; name: string; key_hash: string; last4: string; created_by?: number | null },
) {
  return db.insertInto("api_keys").values(key).returningAll().executeTakeFirstOrThrow();
}

/** A key that still works: not deleted, or rolled and within its overlap (its `deleted_at` still ahead). */
const live = (column: "deleted_at" | "k.deleted_at") => sql<boolean>`(${sql.ref(column)} is null or ${sql.ref(column)} > now())`;

export function listActiveApiKeys(db: Executor, teamId: number) {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("team_id", "=", teamId)
    .where(live("deleted_at"))
    .orderBy("id")
    .execute();
}

/** The team's live keys as the console lists them: who created each, its store restriction, when it was last used. */
export function listTeamKeys(db: Executor, teamId: number) {
  return db
    .selectFrom("api_keys as k")
    .leftJoin("members as m", "m.id", "k.created_by")
    .leftJoin("accounts as a", "a.id", "m.account_id")
    .leftJoin("stores as s", "s.id", "k.store_id")
    .select(["k.id", "k.name", "k.last4", "k.store_id", "s.name as store_name", "k.created_at", "a.email as created_by", "k.last_used_at", "k.deleted_at as expires_at"])
    .where("k.team_id", "=", teamId)
    .where(live("k.deleted_at"))
    .orderBy("k.id")
    .execute();
}

export function findApiKey(db: Executor, id: number) {
  return db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
}

export function markApiKeyDeleted(db: Executor, id: number) {
  return db
    .updateTable("api_keys")
    .set({ deleted_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where(live("deleted_at"))
    .executeTakeFirst();
}

/** A rolled key: it keeps working for `seconds` more, then is refused as a deleted one. */
export function expireApiKey(db: Executor, id: number, seconds: number) {
  return db
    .updateTable("api_keys")
    .set({ deleted_at: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where("id", "=", id)
    .where(live("deleted_at"))
    .returning("deleted_at")
    .executeTakeFirst();
}

export function renameApiKey(db: Executor, id: number, name: string) {
  return db.updateTable("api_keys").set({ name }).where("id", "=", id).where(live("deleted_at")).returning(["id", "name"]).executeTakeFirst();
}

/** A deleted key, and the store named when it belongs to the key's team; undefined otherwise. */
export function findDeletedKeyCaller(db: Executor, keyHash: string, storeId: number) {
  return db
    .selectFrom("api_keys as k")
    .innerJoin("stores as s", "s.team_id", "k.team_id")
    .select(["k.id as key_id", "s.id as store_id"])
    .where("k.key_hash", "=", keyHash)
    .where("k.deleted_at", "<=", sql<Date>`now()`)
    .where("s.id", "=", storeId)
    .limit(1)
    .executeTakeFirst();
}

/**
 * One round trip answers every authorization question of a request: the live
 * key with this hash, and the store in the path (when the path names one).
 * No cache sits in front of this, so a deleted key is refused on the very next
 * request by every server process.
 */
export function findKeyAccess(db: Executor, keyHash: string, storeId: number | undefined) {
  return db
    .selectFrom("api_keys as k")
    .leftJoin("stores as s", (join) => join.on((eb) => eb("s.id", "=", storeId ?? -1)))
    .select([
      "k.id as key_id",
      "k.team_id as key_team_id",
      "k.store_id as key_store_id",
      "s.id as store_id",
      "s.team_id as store_team_id",
      "s.paused as store_paused",
      "s.country as store_country",
      "s.recovery_delay_seconds as store_recovery_delay_seconds",
      "s.log_bodies as store_log_bodies",
      // Set ahead on a rolled key: when it stops working.
      "k.deleted_at as key_expires_at",
    ])
    .where("k.key_hash", "=", keyHash)
    .where(live("k.deleted_at"))
    .executeTakeFirst();
}
