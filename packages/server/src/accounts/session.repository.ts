import { sql } from "kysely";
import type { Executor, Role } from "../db/types.js";

/** A session's own conditions of life: not expired, not idle (by the database's clock). */
const LIVE = (idleSeconds: number) => sql<boolean>`s.expires_at > now() and s.last_seen_at > now() - make_interval(secs => ${idleSeconds})`;

/** The account's live sessions, in every team it belongs to, newest first. */
export function listAccountSessions(db: Executor, accountId: number, idleSeconds: number) {
  return db
    .selectFrom("sessions as s")
    .innerJoin("members as m", "m.id", "s.member_id")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select(["s.id", "s.created_at", "s.last_seen_at", "s.address", "s.user_agent", "t.name as team_name"])
    .where("m.account_id", "=", accountId)
    .where(LIVE(idleSeconds))
    .orderBy("s.last_seen_at", "desc")
    .execute();
}

/** Ends one of the account's sessions; false when it has none of this id. */
export async function deleteAccountSession(db: Executor, accountId: number, sessionId: number): Promise<boolean> {
  const result = await db
    .deleteFrom("sessions")
    .where("id", "=", sessionId)
    .where("member_id", "in", (qb) => qb.selectFrom("members").select("id").where("account_id", "=", accountId))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ends every session of the account (but `keep`, the one asking, when given); how many ended. */
export async function deleteAccountSessions(db: Executor, accountId: number, keep?: number): Promise<number> {
  let query = db.deleteFrom("sessions").where("member_id", "in", (qb) => qb.selectFrom("members").select("id").where("account_id", "=", accountId));
  if (keep !== undefined) query = query.where("id", "!=", keep);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function setPasswordHash(db: Executor, accountId: number, passwordHash: string): Promise<void> {
  await db.updateTable("accounts").set({ password_hash: passwordHash }).where("id", "=", accountId).execute();
}

export async function insertPasswordReset(db: Executor, accountId: number, tokenHash: string, lifetimeSeconds: number): Promise<void> {
  await db
    .insertInto("password_resets")
    .values({ account_id: accountId, token_hash: tokenHash, expires_at: sql<Date>`now() + make_interval(secs => ${lifetimeSeconds})` })
    .execute();
}

/** Uses a reset link: the account it is for, once, before it expires; undefined for any other. */
export async function takePasswordReset(db: Executor, tokenHash: string): Promise<number | undefined> {
  const row = await db
    .updateTable("password_resets")
    .set({ used_at: sql<Date>`now()` })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", sql<Date>`now()`)
    .returning("account_id")
    .executeTakeFirst();
  return row ? Number(row.account_id) : undefined;
}

/** Whether a reset link can still be used (the page asks before showing its form). */
export async function resetUsable(db: Executor, tokenHash: string): Promise<boolean> {
  const row = await db.selectFrom("password_resets").select("id").where("token_hash", "=", tokenHash).where("used_at", "is", null).where("expires_at", ">", sql<Date>`now()`).executeTakeFirst();
  return row !== undefined;
}

/**
 * Gives a member of the team a role; a team keeps at least one owner. The
 * row is locked with the team's other owners so two demotions at once cannot
 * both pass. Answers the member's e-mail, "last" or "unknown".
 */
export async function setRole(db: Executor, teamId: number, memberId: number, role: Role): Promise<{ email: string } | "last" | "unknown"> {
  const owners = await db.selectFrom("members").select(["id"]).where("team_id", "=", teamId).where("role", "=", "owner").orderBy("id").forUpdate().execute();
  const member = await db
    .selectFrom("members as m")
    .innerJoin("accounts as a", "a.id", "m.account_id")
    .select(["m.id", "m.role", "a.email"])
    .where("m.id", "=", memberId)
    .where("m.team_id", "=", teamId)
    .executeTakeFirst();
  if (!member) return "unknown";
  if (role === "member" && member.role === "owner" && owners.length <= 1) return "last";
  await db.updateTable("members").set({ role }).where("id", "=", memberId).execute();
  return { email: member.email };
}
