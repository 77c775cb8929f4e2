import type { Db, Role } from "../db/types.js";
import { inTransaction, formatTimestamp } from "../db/sql.js";
import { AppError } from "../errors.js";
import * as repo from "./member.repository.js";
import { recordAudit } from "./audit.js";
import { hashPassword, UNKNOWN_MEMBER_HASH, verifyPassword } from "./password.js";
import { openChallenge, secondFactorNeeded } from "./two-factor.service.js";
import type { Caller } from "./caller.js";
import type { Mail, Mailer } from "./mail.js";
import type { Logger } from "../logger.js";
import type pg from "pg";
import { createRateLimiter, type RateLimiter, hashToken, randomToken } from "../tenancy/access.js";
export type { Caller } from "./caller.js";

export type AccountSettings = {
  /** Where the console is reached: invitation links start with it. */
  publicUrl: string;
  sessionIdleSeconds: number;
  sessionMaxSeconds: number;
  invitationSeconds: number;
};

/**
 * Sign-in throttles: per account and address (guessing one member's password
 * from one place), per address (one place trying many accounts), and per
 * account from everywhere with a budget ten times larger (guessing from many
 * places). A stranger failing on a member's e-mail spends their own address's
 * budget, not the member's: the member signs in from elsewhere as usual.
 */
export type SignInLimiters = { byAccountAddress: RateLimiter; byAddress: RateLimiter; byAccount: RateLimiter };

/** A signed-in member, as every console procedure sees it. */
export type Session = { sessionId: number; memberId: number; role: Role; accountId: number; email: string; teamId: number; teamName: string };

/** A new session: the token goes into the cookie, only its hash into the database. */
export type NewSession = { token: string; expiresAt: Date };

export const INVITATION_DAYS = 7;

/** Sign-in attempts allowed in 15 minutes: per e-mail and address (guessing one password; ten times as many per e-mail from everywhere) and per address (trying many e-mails). */
export const SIGN_IN_LIMITS = { perEmail: 10, perAddress: 50, windowSeconds: 15 * 60 };

/**
 * The throttles, shared by every process on PostgreSQL (like the API's rate
 * limit), in memory for the single embedded process.
 */
export function createSignInLimiters(pool: pg.Pool | undefined, limits = SIGN_IN_LIMITS): SignInLimiters {
  return {
    byAccountAddress: createRateLimiter({ requests: limits.perEmail, windowSeconds: limits.windowSeconds }, pool, "sign-in-account-address"),
    byAddress: createRateLimiter({ requests: limits.perAddress, windowSeconds: limits.windowSeconds }, pool, "sign-in-address"),
    byAccount: createRateLimiter({ requests: limits.perEmail * 10, windowSeconds: limits.windowSeconds }, pool, "sign-in-account"),
  };
}

async function startSession(db: Db, settings: AccountSettings, memberId: number, caller: Caller | undefined): Promise<NewSession> {
  const token = randomToken();
  const row = await repo.insertSession(db, {
    member_id: memberId,
    token_hash: hashToken(token),
    maxAgeSeconds: settings.sessionMaxSeconds,
    address: caller?.address ?? null,
    user_agent: caller?.userAgent ?? null,
  });
  return { token, expiresAt: row.expires_at };
}

/**
 * A one-time link for `email` to join the team; it expires after seven days.
 * The answer is the same whether or not the e-mail has an account (in this
 * team's eyes a stranger's account does not exist): a person who has one
 * accepts by signing in, a new person by choosing a password. Only a member of
 * this very team, whom the team's page lists anyway, is refused.
 */
export async function inviteMember(db: Db, settings: AccountSettings, input: { teamId: number; email: string; invitedBy: number | null }) {
  if (await repo.findMemberByEmail(db, input.teamId, input.email)) throw new AppError("ALREADY_MEMBER", [{ path: "email", message: "is already a member of the team" }]);
  const token = randomToken();
  const invitation = await repo.insertInvitation(db, {
    team_id: input.teamId,
    email: input.email,
    token_hash: hashToken(token),
    invited_by: input.invitedBy,
    expiresInSeconds: settings.invitationSeconds,
  });
  return {
    team_id: invitation.team_id,
    email: invitation.email,
    url: `${settings.publicUrl}/invite/${token}`,
    expires_at: formatTimestamp(invitation.expires_at),
  };
}

/** The team's pending invitations (their links cannot be shown again: `renewInvitation` makes a new one). */
export async function listInvitations(db: Db, teamId: number) {
  return (await repo.listOpenInvitations(db, teamId)).map((row) => ({
    id: row.id,
    email: row.email,
    invited_by: row.invited_by,
    created_at: formatTimestamp(row.created_at),
    expires_at: formatTimestamp(row.expires_at),
  }));
}

/** A new link for a pending invitation, to copy; the old link stops working. */
export async function renewInvitation(db: Db, settings: AccountSettings, teamId: number, id: number) {
  const token = randomToken();
  const invitation = await repo.renewInvitationToken(db, teamId, id, hashToken(token));
  if (!invitation) throw new AppError("INVITATION_INVALID");
  return { team_id: invitation.team_id, email: invitation.email, url: `${settings.publicUrl}/invite/${token}`, expires_at: formatTimestamp(invitation.expires_at) };
}

/** Withdraws a pending invitation: its link answers as an unknown one from now on. */
export async function revokeInvitation(db: Db, teamId: number, id: number): Promise<{ email: string }> {
  const email = await repo.deleteOpenInvitation(db, teamId, id);
  if (email === undefined) throw new AppError("INVITATION_INVALID");
  return { email };
}

export async function describeInvitation(db: Db, token: string) {
  const invitation = await repo.findOpenInvitation(db, hashToken(token));
  if (!invitation) throw new AppError("INVITATION_INVALID");
  return { email: invitation.email, team_name: invitation.team_name, expires_at: formatTimestamp(invitation.expires_at) };
}

/**
 * A password chosen on an invitation link. Nothing is created yet: the
 * e-mail must be proven first. A new address is sent a link that creates the
 * account (`verifyInvitation`); an address that has an account is left as it
 * is, and its owner is told by mail (signing in, then opening the invitation,
 * joins). The answer, and the work before it, are the same either way: the
 * link's holder learns nothing about who has an account.
 */
export async function acceptInvitation(db: Db, settings: AccountSettings, mailer: Mailer, logger: Logger, token: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const invitation = await repo.findOpenInvitation(db, hashToken(token));
  if (!invitation) throw new AppError("INVITATION_INVALID");
  const existing = await repo.findAccountByEmail(db, invitation.email);
  let mail: Mail;
  if (existing) {
    mail = {
      to: invitation.email,
      subject: `An invitation to ${invitation.team_name} was opened with your e-mail`,
      text: `Someone opened an invitation to the team ${invitation.team_name} on Commerce Ingest for ${invitation.email} and chose a password for it.\n\nYour account already exists: nothing of it changed, and that password does nothing. If this was you, sign in with your own password, then open the invitation link again to join the team.\n\nIf it was not you, you can ignore this mail.\n`,
    };
  } else {
    const proof = randomToken();
    await repo.setPendingPassword(db, invitation.id, passwordHash, hashToken(proof));
    mail = {
      to: invitation.email,
      subject: `Confirm your e-mail to join ${invitation.team_name}`,
      text: `Confirm that ${invitation.email} is yours to finish joining ${invitation.team_name} on Commerce Ingest (the link works once, for a day):\n\n${settings.publicUrl}/verify/${proof}\n\nIf you did not ask for this, ignore this mail: no account is made without it.\n`,
    };
  }
  // Sent after the answer, so both kinds take the same time to answer.
  void mailer.send(mail).catch((error: unknown) => logger.error({ err: error instanceof Error ? { message: error.message } : String(error) }, "could not send an invitation mail"));
}

/**
 * The mailed link that proves an invitation's e-mail: the account is made
 * with the password chosen, joins the team and is signed in; the invitation
 * and the link work once.
 */
export async function verifyInvitation(db: Db, settings: AccountSettings, token: string, caller?: Caller): Promise<NewSession> {
  const memberId = await inTransaction(db, async (trx) => {
    const invitation = await repo.findVerifiableInvitation(trx, hashToken(token));
    if (!invitation?.pending_password_hash || !(await repo.markInvitationAccepted(trx, invitation.id))) throw new AppError("INVITATION_INVALID");
    // An account made for the e-mail since (another invitation proven first): this link has nothing left to do.
    if (await repo.findAccountByEmail(trx, invitation.email)) throw new AppError("INVITATION_INVALID");
    const account = await repo.insertAccount(trx, { email: invitation.email, password_hash: invitation.pending_password_hash }).catch((error: unknown) => {
      if (error instanceof Error && "code" in error && error.code === "23505") throw new AppError("INVITATION_INVALID");
      throw error;
    });
    // The operator's invitation (a team's first people) makes an owner; a member's, a member.
    const member = await repo.insertMember(trx, { team_id: invitation.team_id, account_id: account.id, role: invitation.invited_by === null ? "owner" : "member" });
    await recordAudit(trx, { teamId: invitation.team_id, actor: invitation.email, action: "member.joined", target: invitation.email, address: caller?.address, userAgent: caller?.userAgent });
    return member.id;
  });
  return startSession(db, settings, memberId, caller);
}

/**
 * A signed-in person's acceptance: the invitation must name their account's
 * e-mail. They join the team (once; a second invitation of a member just
 * closes) and the session moves to it.
 */
export async function joinTeam(db: Db, session: Session, token: string): Promise<{ id: number; name: string }> {
  return inTransaction(db, async (trx) => {
    const invitation = await repo.findOpenInvitation(trx, hashToken(token));
    if (!invitation) throw new AppError("INVITATION_INVALID");
    if (invitation.email.trim().toLowerCase() !== session.email.trim().toLowerCase()) throw new AppError("INVITATION_OTHER_ACCOUNT");
    if (!(await repo.markInvitationAccepted(trx, invitation.id))) throw new AppError("INVITATION_INVALID");
    let member = await repo.findMembership(trx, session.accountId, invitation.team_id);
    if (!member) {
      member = await repo.insertMember(trx, { team_id: invitation.team_id, account_id: session.accountId, role: invitation.invited_by === null ? "owner" : "member" });
      await recordAudit(trx, { teamId: invitation.team_id, actor: session.email, action: "member.joined", target: session.email });
    }
    await repo.setSessionMember(trx, session.sessionId, member.id);
    return { id: invitation.team_id, name: invitation.team_name };
  });
}

/** The teams the signed-in account belongs to; `current` marks the one the console shows. */
export async function listTeams(db: Db, session: Session) {
  return (await repo.listAccountTeams(db, session.accountId)).map((team) => ({ id: team.id, name: team.name, current: team.id === session.teamId }));
}

/** Shows another of the account's teams; a team it does not belong to answers as unknown. */
export async function switchTeam(db: Db, session: Session, teamId: number): Promise<{ id: number; name: string }> {
  const team = (await repo.listAccountTeams(db, session.accountId)).find((row) => row.id === teamId);
  if (!team) throw new AppError("TEAM_NOT_FOUND");
  await repo.setSessionMember(db, session.sessionId, team.member_id);
  return { id: team.id, name: team.name };
}

/**
 * Signs in with e-mail and password. A wrong e-mail and a wrong password get
 * the same answer after the same work (an unknown e-mail is checked against a
 * hash nothing matches), and failures are throttled per e-mail and per address.
 */
export async function signIn(
  db: Db,
  settings: AccountSettings,
  limiters: SignInLimiters,
  input: { email: string; password: string; address: string; userAgent?: string | null },
): Promise<{ session: NewSession } | { challenge: string; need: "code" | "setup" }> {
  const emailKey = input.email.trim().toLowerCase();
  const accountAddress = `${emailKey}|${input.address}`;
  const decisions = await Promise.all([limiters.byAccountAddress.consume(accountAddress), limiters.byAddress.consume(input.address), limiters.byAccount.consume(emailKey)]);
  const refused = decisions.filter((decision) => !decision.allowed);
  if (refused.length > 0) {
    const retryAfter = Math.max(...refused.map((decision) => (decision.allowed ? 0 : decision.retryAfterSeconds)));
    throw new AppError("SIGN_IN_THROTTLED", undefined, { "Retry-After": String(retryAfter) });
  }
  const account = await repo.findAccountByEmail(db, emailKey);
  const matches = await verifyPassword(input.password, account?.password_hash ?? UNKNOWN_MEMBER_HASH);
  // The session opens on the first team the account joined; the console switches between them.
  const teams = account ? await repo.listAccountTeams(db, account.id) : [];
  const caller = { address: input.address, userAgent: input.userAgent ?? null };
  const [team] = matches ? teams : [];
  if (!account || !team) {
    // A failure on an account is in its teams' audit logs; on an unknown e-mail there is no team to tell.
    for (const { id } of teams) await recordAudit(db, { teamId: id, actor: account?.email ?? emailKey, action: "session.sign_in_failed", target: account?.email ?? emailKey, ...caller });
    throw new AppError("SIGN_IN_FAILED");
  }
  await Promise.all([limiters.byAccountAddress.reset(accountAddress), limiters.byAccount.reset(emailKey)]);
  // The right password, and a second factor to come (a code, or its setup a team requires): no session yet.
  const need = await secondFactorNeeded(db, account.id);
  if (need) return { challenge: await openChallenge(db, account.id, team.member_id, need), need };
  return { session: await openSession(db, settings, { memberId: team.member_id, email: account.email }, caller) };
}

/** A sign-in done (its password, and its second factor if any): the session, in the audit log of its team. */
export async function openSession(db: Db, settings: AccountSettings, member: { memberId: number; email: string }, caller: Caller, how = ""): Promise<NewSession> {
  const row = await db.selectFrom("members").select("team_id").where("id", "=", member.memberId).executeTakeFirstOrThrow();
  await recordAudit(db, { teamId: Number(row.team_id), actor: member.email, action: "session.signed_in", target: `${member.email}${how}`, ...caller });
  return startSession(db, settings, member.memberId, caller);
}

/** The session the cookie names, if it is live; using it keeps it from going idle. */
export async function findSession(db: Db, settings: AccountSettings, token: string | undefined): Promise<Session | undefined> {
  if (!token) return undefined;
  const row = await repo.touchSession(db, hashToken(token), settings.sessionIdleSeconds);
  return row && { sessionId: row.session_id, memberId: row.member_id, role: row.role, accountId: row.account_id, email: row.email, teamId: row.team_id, teamName: row.team_name };
}

/**
 * Whether a session found earlier can still be used: it ends at sign-out, when
 * its member is removed (the row goes with the member), and at expiry. For a
 * long-lived connection (the live view), which must end with its session.
 */
export function sessionUsable(db: Db, settings: AccountSettings, sessionId: number): Promise<boolean> {
  return repo.sessionUsable(db, sessionId, settings.sessionIdleSeconds);
}

export async function signOut(db: Db, token: string | undefined): Promise<void> {
  if (token) await repo.deleteSession(db, hashToken(token));
}

export async function listMembers(db: Db, teamId: number) {
  return (await repo.listMembers(db, teamId)).map((member) => ({ id: member.id, email: member.email, role: member.role, created_at: formatTimestamp(member.created_at) }));
}

/**
 * A member of another team answers as if it did not exist; the last member
 * stays. Their sessions on this team end; an account left with no team goes.
 */
export async function removeMember(db: Db, teamId: number, memberId: number): Promise<{ email: string }> {
  return inTransaction(db, async (trx) => {
    const member = (await repo.listMembers(trx, teamId)).find((row) => row.id === memberId);
    const removed = await repo.deleteMemberUnlessLast(trx, teamId, memberId);
    if (removed.outcome !== "removed") throw new AppError(removed.outcome === "last" ? "LAST_MEMBER" : "MEMBER_NOT_FOUND");
    await repo.deleteAccountWithoutTeam(trx, removed.accountId);
    return { email: member?.email ?? `member ${memberId}` };
  });
}
