import type { ApiKey, CreatedApiKey, Store, Team } from "@commerce-ingest/shared";
import { isSupportedCountry } from "libphonenumber-js/max";
import type { ApiKeyRow, Db, StoreRow, TeamRow } from "../db/types.js";
import { AppError } from "../errors.js";
import { formatOptionalTimestamp, formatTimestamp, inTransaction } from "../db/sql.js";
import { generateApiKey, hashApiKey } from "./access.js";
import * as repo from "./tenant.repository.js";
import { accessChanged } from "./access-events.js";

/**
 * Says a change to keys or stores was written. Outside a transaction it is
 * committed: wait until every process has been told. Inside one, the
 * notification comes only at its commit: this process forgets now, the others
 * when it comes.
 */
async function told(db: Db): Promise<void> {
  if (db.isTransaction) void accessChanged();
  else await accessChanged();
}

export function toTeam(row: TeamRow): Team {
  return { id: row.id, name: row.name, created_at: formatTimestamp(row.created_at) };
}

export function toStore(row: StoreRow): Store {
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    country: row.country,
    recovery_delay_seconds: row.recovery_delay_seconds,
    paused: row.paused,
    log_bodies: row.log_bodies,
    created_at: formatTimestamp(row.created_at),
  };
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    team_id: row.team_id,
    store_id: row.store_id,
    name: row.name,
    last4: row.last4,
    created_at: formatTimestamp(row.created_at),
  };
}

function checkCountry(country: string | null | undefined): void {
  if (country && !isSupportedCountry(country)) {
    throw new AppError("VALIDATION_FAILED", [{ path: "country", message: "is not a country with a known phone numbering plan" }]);
  }
}

export async function requireTeam(db: Db, teamId: number): Promise<void> {
  if (!(await repo.findTeam(db, teamId))) throw new AppError("TEAM_NOT_FOUND");
}

export async function createTeam(db: Db, name: string): Promise<Team> {
  return toTeam(await repo.insertTeam(db, name));
}

export async function listTeams(db: Db): Promise<Team[]> {
  return (await repo.listTeams(db)).map(toTeam);
}

export async function createStore(
  db: Db,
  input: { team_id: number; name: string; country?: string | null | undefined; recovery_delay_seconds?: number | undefined },
): Promise<Store> {
  checkCountry(input.country);
  await requireTeam(db, input.team_id);
  const row = await repo.insertStore(db, {
    team_id: input.team_id,
    name: input.name,
    country: input.country ?? null,
    recovery_delay_seconds: input.recovery_delay_seconds,
  });
  await told(db);
  return toStore(row);
}

export async function updateStore(
  db: Db,
  id: number,
  patch: { name?: string | undefined; country?: string | null | undefined; recovery_delay_seconds?: number | undefined; paused?: boolean | undefined; log_bodies?: boolean | undefined },
): Promise<Store> {
  checkCountry(patch.country);
  const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  const row = Object.keys(changes).length > 0 ? await repo.updateStore(db, id, changes) : await repo.findStore(db, id);
  if (!row) throw new AppError("ADMIN_STORE_NOT_FOUND");
  await told(db);
  return toStore(row);
}

export async function getStore(db: Db, id: number): Promise<Store> {
  const row = await repo.findStore(db, id);
  if (!row) throw new AppError("ADMIN_STORE_NOT_FOUND");
  await told(db);
  return toStore(row);
}

export async function listStores(db: Db, teamId: number | undefined): Promise<Store[]> {
  return (await repo.listStores(db, teamId)).map(toStore);
}

export async function createApiKey(
  db: Db,
  input: { team_id: number; name: string; store_id?: number | null | undefined; created_by?: number | null },
): Promise<CreatedApiKey> {
  await requireTeam(db, input.team_id);
  const storeId = input.store_id ?? null;
  if (storeId !== null) {
    const store = await repo.findStore(db, storeId);
    if (!store || store.team_id !== input.team_id) {
      throw new AppError("VALIDATION_FAILED", [{ path: "store_id", message: "must be a store of this team" }]);
    }
  }
  const key = generateApiKey();
  const row = await repo.insertApiKey(db, {
    team_id: input.team_id,
    store_id: storeId,
    name: input.name,
    key_hash: hashApiKey(key),
    last4: key.slice(-4),
    created_by: input.created_by ?? null,
  });
  return { ...toApiKey(row), key };
}

export async function listApiKeys(db: Db, teamId: number): Promise<ApiKey[]> {
  await requireTeam(db, teamId);
  return (await repo.listActiveApiKeys(db, teamId)).map(toApiKey);
}

export async function listTeamKeys(db: Db, teamId: number) {
  return (await repo.listTeamKeys(db, teamId)).map((row) => ({
    id: row.id,
    name: row.name,
    last4: row.last4,
    store: row.store_id === null ? null : { id: row.store_id, name: row.store_name ?? "" },
    created_at: formatTimestamp(row.created_at),
    created_by: row.created_by,
    last_used_at: formatOptionalTimestamp(row.last_used_at),
    /** A rolled key's end: it works until then. */
    expires_at: formatOptionalTimestamp(row.expires_at),
  }));
}

/** The team's store; another team's answers as if it did not exist. */
export async function getTeamStore(db: Db, teamId: number, storeId: number): Promise<Store> {
  const row = await repo.findStore(db, storeId);
  if (!row || row.team_id !== teamId) throw new AppError("ADMIN_STORE_NOT_FOUND");
  return toStore(row);
}

/**
 * Deleting twice is fine; deleting a key that never existed (or, with
 * `teamId`, another team's) is a 404.
 */
/** The longest a rolled key keeps working beside its successor. */
export const MOST_ROLL_OVERLAP_SECONDS = 7 * 24 * 3600;

/**
 * A new key in place of one of the team's (same name and store restriction):
 * the new key's value is shown once; the old one keeps working for
 * `overlapSeconds` (0: stops at once), then is refused as a deleted key.
 */
export async function rollApiKey(
  db: Db,
  input: { teamId: number; id: number; overlapSeconds: number; createdBy: number | null },
): Promise<{ key: CreatedApiKey; previous_expires_at: string; previous_last4: string }> {
  const rolled = await inTransaction(db, async (trx) => {
    const old = await repo.findApiKey(trx, input.id);
    if (!old || old.team_id !== input.teamId) throw new AppError("KEY_NOT_FOUND");
    const expired = await repo.expireApiKey(trx, input.id, input.overlapSeconds);
    if (!expired?.deleted_at) throw new AppError("KEY_NOT_FOUND");
    const value = generateApiKey();
    const row = await repo.insertApiKey(trx, { team_id: old.team_id, store_id: old.store_id, name: old.name, key_hash: hashApiKey(value), last4: value.slice(-4), created_by: input.createdBy });
    return { key: { ...toApiKey(row), key: value }, previous_expires_at: formatTimestamp(expired.deleted_at), previous_last4: old.last4 };
  });
  await told(db);
  return rolled;
}

export async function renameApiKey(db: Db, teamId: number, id: number, name: string): Promise<{ id: number; name: string; previous_name: string; last4: string }> {
  const key = await repo.findApiKey(db, id);
  if (!key || key.team_id !== teamId) throw new AppError("KEY_NOT_FOUND");
  const renamed = await repo.renameApiKey(db, id, name);
  if (!renamed) throw new AppError("KEY_NOT_FOUND");
  return { ...renamed, previous_name: key.name, last4: key.last4 };
}

export async function deleteApiKey(db: Db, id: number, teamId?: number): Promise<{ team_id: number; name: string; last4: string }> {
  const key = await repo.findApiKey(db, id);
  if (!key || (teamId !== undefined && key.team_id !== teamId)) throw new AppError("KEY_NOT_FOUND");
  await repo.markApiKeyDeleted(db, id);
  await told(db);
  return { team_id: key.team_id, name: key.name, last4: key.last4 };
}
