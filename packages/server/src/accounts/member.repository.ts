import { sql } from "kysely";
import type { Executor, Role } from "../db/types.js";

/** An invitation that can still be accepted: not used, not expired (by the database's clock). */
const OPEN_INVITATION = sql<boolean>`accepted_at is null and expires_at > now()`;

export function findAccountByEmail(db: Executor, email: string) {
  return db.selectFrom("accounts").selectAll().where(sql<string>`lower(email)`, "=", email.trim().toLowerCase()).executeTakeFirst();
}

export function insertAccount(db: Executor, account: { email: string; password_hash: string }) {
  return db.insertInto("accounts").values(account).returning(["id", "email"]).executeTakeFirstOrThrow();
}

export function insertMember(db: Executor, member: { team_id: number; account_id: number; role: Role }) {
  return db.insertInto("members").values(member).returning(["id", "team_id", "account_id"]).executeTakeFirstOrThrow();
}

/** The account's membership of the team, found by the account's e-mail. */
export function findMemberByEmail(db: Executor, teamId: number, email: string) {
  return db
    .selectFrom("members as m")
    .innerJoin("accounts as a", "a.id", "m.account_id")
    .select(["m.id", "m.account_id"])
    .where("m.team_id", "=", teamId)
    .where(sql<string>`lower(a.email)`, "=", email.trim().toLowerCase())
    .executeTakeFirst();
}

export function findMembership(db: Executor, accountId: number, teamId: number) {
  return db.selectFrom("members").select(["id", "team_id"]).where("account_id", "=", accountId).where("team_id", "=", teamId).executeTakeFirst();
}

/** The teams an account belongs to, in the order it joined them. */
export function listAccountTeams(db: Executor, accountId: number) {
  return db
    .selectFrom("members as m")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select(["m.id as member_id", "t.id", "t.name"])
    .where("m.account_id", "=", accountId)
    .orderBy("m.id")
    .execute();
}

export function listMembers(db: Executor, teamId: number) {
  return db
    .selectFrom("members as m")
    .innerJoin("accounts as a", "a.id", "m.account_id")
    .select(["m.id", "a.email", "m.role", "m.created_at"])
    .where("m.team_id", "=", teamId)
    .orderBy("m.id")
    .execute();
}

/** Removes a member of the team unless it is the team's last one. */
export async function deleteMemberUnlessLast(db: Executor, teamId: number, memberId: number): Promise<{ outcome: "removed"; accountId: number } | { outcome: "last" | "unknown" }> {
  const removed = await db
    .deleteFrom("members")
    .where("id", "=", memberId)
    .where("team_id", "=", teamId)
    .where((eb) => eb(eb.selectFrom("members as m").select(eb.fn.countAll<number>().as("n")).where("m.team_id", "=", teamId), ">", 1))
    .returning("account_id")
    .executeTakeFirst();
  if (removed) return { outcome: "removed", accountId: removed.account_id };
  const exists = await db.selectFrom("members").select("id").where("id", "=", memberId).where("team_id", "=", teamId).executeTakeFirst();
  return { outcome: exists ? "last" : "unknown" };
}

/** Deletes the account once it belongs to no team: a person removed from their only team can be invited afresh. */
export async function deleteAccountWithoutTeam(db: Executor, accountId: number): Promise<void> {
  await db
    .deleteFrom("accounts")
    .where("id", "=", accountId)
    .where((eb) => eb.not(eb.exists(eb.selectFrom("members").select("id").where("account_id", "=", accountId))))
    .execute();
}

export function insertInvitation(db: Executor, invitation: { team_id: number; email: string; token_hash: string; invited_by: number | null; expiresInSeconds: number }) {
  const { expiresInSeconds, ...values } = invitation;
  return db
    .insertInto("invitations")
    .values({ ...values, expires_at: sql<Date>`now() + make_interval(secs => ${expiresInSeconds})` })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findOpenInvitation(db: Executor, tokenHash: string) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("teams as t", "t.id", "i.team_id")
    .select(["i.id", "i.team_id", "i.email", "i.expires_at", "i.invited_by", "t.name as team_name"])
    .where("i.token_hash", "=", tokenHash)
    .where(OPEN_INVITATION)
    .executeTakeFirst();
}

/** Keeps the password chosen on an invitation until its e-mail is proven by `tokenHash`'s link (a day). */
export async function setPendingPassword(db: Executor, invitationId: number, passwordHash: string, tokenHash: string): Promise<void> {
  await db
    .updateTable("invitations")
    .set({ pending_password_hash: passwordHash, verify_token_hash: tokenHash, verify_expires_at: sql<Date>`now() + interval '1 day'` })
    .where("id", "=", invitationId)
    .execute();
}

/** The open invitation whose e-mail this link proves, with the password chosen for it. */
export function findVerifiableInvitation(db: Executor, tokenHash: string) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("teams as t", "t.id", "i.team_id")
    .select(["i.id", "i.team_id", "i.email", "i.invited_by", "i.pending_password_hash", "t.name as team_name"])
    .where("i.verify_token_hash", "=", tokenHash)
    .where("i.verify_expires_at", ">", sql<Date>`now()`)
    .where(OPEN_INVITATION)
    .executeTakeFirst();
}

/** The team's invitations that can still be accepted, newest first, with who sent each. */
export function listOpenInvitations(db: Executor, teamId: number) {
  return db
    .selectFrom("invitations as i")
    .leftJoin("members as m", "m.id", "i.invited_by")
    .leftJoin("accounts as a", "a.id", "m.account_id")
    .select(["i.id", "i.email", "i.created_at", "i.expires_at", "a.email as invited_by"])
    .where("i.team_id", "=", teamId)
    .where(OPEN_INVITATION)
    .orderBy("i.id", "desc")
    .execute();
}

/** A new link for the team's open invitation (the old one stops working); undefined when there is no such invitation. */
export function renewInvitationToken(db: Executor, teamId: number, id: number, tokenHash: string) {
  return db
    .updateTable("invitations")
    .set({ token_hash: tokenHash })
    .where("id", "=", id)
    .where("team_id", "=", teamId)
    .where(OPEN_INVITATION)
    .returning(["id", "team_id", "email", "expires_at"])
    .executeTakeFirst();
}

/** Withdraws the team's open invitation: its link is refused from now on. Answers its e-mail; undefined when there was none. */
export async function deleteOpenInvitation(db: Executor, teamId: number, id: number): Promise<string | undefined> {
  const row = await db.deleteFrom("invitations").where("id", "=", id).where("team_id", "=", teamId).where("accepted_at", "is", null).returning("email").executeTakeFirst();
  return row?.email;
}

/** Marks the invitation used; false when another request used it first. */
export async function markInvitationAccepted(db: Executor, id: number): Promise<boolean> {
  const result = await db.updateTable("invitations").set({ accepted_at: sql<Date>`now()` }).where("id", "=", id).where("accepted_at", "is", null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function insertSession(db: Executor, session: { member_id: number; token_hash: string; maxAgeSeconds: number; address: string | null; user_agent: string | null }) {
  return db
    .insertInto("sessions")
    .values({
      member_id: session.member_id,
      token_hash: session.token_hash,
      expires_at: sql<Date>`now() + make_interval(secs => ${session.maxAgeSeconds})`,
      address: session.address,
      user_agent: session.user_agent,
    })
    .returning(["id", "expires_at"])
    .executeTakeFirstOrThrow();
}

/** Moves the session to another of its account's memberships: the console now shows that team. */
export async function setSessionMember(db: Executor, sessionId: number, memberId: number): Promise<void> {
  await db.updateTable("sessions").set({ member_id: memberId }).where("id", "=", sessionId).execute();
}

/**
 * The live session with this token, with its account and team, seen now: one
 * statement that refuses an expired or idle session and records the visit.
 */
export function touchSession(db: Executor, tokenHash: string, idleSeconds: number) {
  return db
    .with("touched", (qb) =>
      qb
        .updateTable("sessions")
        .set({ last_seen_at: sql<Date>`now()` })
        .where("token_hash", "=", tokenHash)
        .where("expires_at", ">", sql<Date>`now()`)
        .where("last_seen_at", ">", sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
        .returning(["id", "member_id"]),
    )
    .selectFrom("touched")
    .innerJoin("members as m", "m.id", "touched.member_id")
    .innerJoin("accounts as a", "a.id", "m.account_id")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select(["touched.id as session_id", "m.id as member_id", "m.role", "a.id as account_id", "a.email", "t.id as team_id", "t.name as team_name"])
    .executeTakeFirst();
}

/** Whether a session can still be used (not signed out, not expired, its member still in the team), without counting as its use. */
export async function sessionUsable(db: Executor, sessionId: number, idleSeconds: number): Promise<boolean> {
  const row = await db
    .selectFrom("sessions")
    .select("id")
    .where("id", "=", sessionId)
    .where("expires_at", ">", sql<Date>`now()`)
    .where("last_seen_at", ">", sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteSession(db: Executor, tokenHash: string): Promise<void> {
  await db.deleteFrom("sessions").where("token_hash", "=", tokenHash).execute();
}

/** Sessions past their absolute or idle expiry: nothing can use them any more. */
export async function deleteExpiredSessions(db: Executor, idleSeconds: number): Promise<void> {
  await db
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<=", sql<Date>`now()`), eb("last_seen_at", "<=", sql<Date>`now() - make_interval(secs => ${idleSeconds})`)]))
    .execute();
}
