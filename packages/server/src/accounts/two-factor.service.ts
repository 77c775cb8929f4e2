import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { Secret, TOTP } from "otpauth";
import type { Db, Executor, Trx } from "../db/types.js";
import { inTransaction } from "../db/sql.js";
import { AppError } from "../errors.js";
import { hashToken, randomToken } from "../tenancy/access.js";
import { recordAccountAudit } from "./audit.js";
import type { Caller } from "./caller.js";
import { verifyPassword } from "./password.js";

/** The signed-in account, as much of its session as two-factor sign-in needs. */
type Session = { accountId: number; email: string };

/** How long a sign-in waits for its second factor, and how many codes it takes before it is refused. */
const CHALLENGE_SECONDS = 300;
const CHALLENGE_TRIES = 5;
const RECOVERY_CODES = 10;
const ISSUER = "Commerce Ingest";

/** An account's authenticator: 6 digits every 30 s, SHA-1 (what every authenticator app reads). */
const totpOf = (email: string, secret: string) => new TOTP({ issuer: ISSUER, label: email, secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" });

/** `xxxxx-xxxxx`, lower-case letters and digits: typed by hand from a printout. */
function newRecoveryCode(): string {
  const alphabet = "abcdefghjkmnpqrstuvwxyz23456789";
  const bytes = randomBytes(10);
  const text = [...bytes].map((byte) => alphabet[byte % alphabet.length]).join("");
  return `${text.slice(0, 5)}-${text.slice(5)}`;
}

const normalizeCode = (code: string) => code.trim().toLowerCase().replace(/\s+/g, "");

/**
 * A code from the account's authenticator, checked against its secret: the
 * current step or the one either side (a phone's clock a little off), and
 * never a step already used (a code seen over a shoulder works once).
 */
async function takeCode(trx: Trx, account: { id: number; email: string; secret: string; lastStep: number | null }, code: string): Promise<boolean> {
  const totp = totpOf(account.email, account.secret);
  const delta = totp.validate({ token: normalizeCode(code), window: 1 });
  if (delta === null) return false;
  const step = Math.floor(Date.now() / 1000 / 30) + delta;
  if (account.lastStep !== null && step <= account.lastStep) return false;
  await trx.updateTable("accounts").set({ totp_last_step: step }).where("id", "=", account.id).execute();
  return true;
}

async function replaceRecoveryCodes(trx: Trx, accountId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  await trx.deleteFrom("recovery_codes").where("account_id", "=", accountId).execute();
  await trx.insertInto("recovery_codes").values(codes.map((code) => ({ account_id: accountId, code_hash: hashToken(code) }))).execute();
  return codes;
}

export type TwoFactorSetup = { secret: string; uri: string };

/** A new secret to set up, not in force until a code from it is confirmed. */
async function beginSetup(db: Executor, accountId: number, email: string): Promise<TwoFactorSetup> {
  const secret = new Secret({ size: 20 }).base32;
  await db.updateTable("accounts").set({ totp_pending_secret: secret }).where("id", "=", accountId).execute();
  return { secret, uri: totpOf(email, secret).toString() };
}

/** The setup confirmed by a code from it: in force from now, with ten new recovery codes (answered here, once). */
async function confirmSetup(trx: Trx, accountId: number, code: string, caller: Caller): Promise<string[]> {
  const account = await trx.selectFrom("accounts").select(["email", "totp_pending_secret"]).where("id", "=", accountId).forUpdate().executeTakeFirstOrThrow();
  if (!account.totp_pending_secret) throw new AppError("TWO_FACTOR_NOT_PENDING");
  if (!(await takeCode(trx, { id: accountId, email: account.email, secret: account.totp_pending_secret, lastStep: null }, code))) {
    throw new AppError("SECOND_FACTOR_INVALID", [{ path: "code", message: "is not the code your authenticator shows now" }]);
  }
  await trx
    .updateTable("accounts")
    .set({ totp_secret: account.totp_pending_secret, totp_pending_secret: null, totp_enabled_at: sql<Date>`now()` })
    .where("id", "=", accountId)
    .execute();
  const codes = await replaceRecoveryCodes(trx, accountId);
  await recordAccountAudit(trx, accountId, { actor: account.email, action: "account.two_factor_enabled", target: account.email, ...caller });
  return codes;
}

/** What the account's own page shows: whether two-factor sign-in is on, codes left, and whether a team requires it. */
export async function twoFactorStatus(db: Db, session: Session) {
  const account = await db.selectFrom("accounts").select(["totp_enabled_at"]).where("id", "=", session.accountId).executeTakeFirstOrThrow();
  const left = await db.selectFrom("recovery_codes").select(sql<number>`count(*)::int`.as("n")).where("account_id", "=", session.accountId).where("used_at", "is", null).executeTakeFirstOrThrow();
  const requiring = await db
    .selectFrom("members as m")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select("t.name")
    .where("m.account_id", "=", session.accountId)
    .where("t.require_two_factor", "=", true)
    .execute();
  return { enabled: account.totp_enabled_at !== null, recovery_codes_left: Number(left.n), required_by: requiring.map((row) => row.name) };
}

export const beginTwoFactor = (db: Db, session: Session) => beginSetup(db, session.accountId, session.email);

export function confirmTwoFactor(db: Db, session: Session, code: string, caller: Caller): Promise<{ recovery_codes: string[] }> {
  return inTransaction(db, async (trx) => ({ recovery_codes: await confirmSetup(trx, session.accountId, code, caller) }));
}

/** Turns two-factor sign-in off, the password proven; a team that requires it asks for it again at the next sign-in. */
export async function disableTwoFactor(db: Db, session: Session, password: string, caller: Caller): Promise<void> {
  const account = await db.selectFrom("accounts").select(["password_hash"]).where("id", "=", session.accountId).executeTakeFirstOrThrow();
  if (!(await verifyPassword(password, account.password_hash))) throw new AppError("PASSWORD_INCORRECT", [{ path: "password", message: "is not your password" }]);
  await inTransaction(db, async (trx) => {
    await trx.updateTable("accounts").set({ totp_secret: null, totp_enabled_at: null, totp_pending_secret: null, totp_last_step: null }).where("id", "=", session.accountId).execute();
    await trx.deleteFrom("recovery_codes").where("account_id", "=", session.accountId).execute();
    await recordAccountAudit(trx, session.accountId, { actor: session.email, action: "account.two_factor_disabled", target: session.email, ...caller });
  });
}

/** Ten new recovery codes in place of the old ones (all of which stop working). */
export function renewRecoveryCodes(db: Db, session: Session): Promise<{ recovery_codes: string[] }> {
  return inTransaction(db, async (trx) => {
    const account = await trx.selectFrom("accounts").select("totp_enabled_at").where("id", "=", session.accountId).executeTakeFirstOrThrow();
    if (!account.totp_enabled_at) throw new AppError("TWO_FACTOR_NOT_PENDING");
    return { recovery_codes: await replaceRecoveryCodes(trx, session.accountId) };
  });
}

/**
 * After the right password: what the sign-in still needs. Nothing when the
 * account has no second factor and no team of its requires one; a code when
 * it has one; its setup when a team requires one it does not have yet.
 */
export async function secondFactorNeeded(db: Db, accountId: number): Promise<"code" | "setup" | undefined> {
  const account = await db.selectFrom("accounts").select("totp_enabled_at").where("id", "=", accountId).executeTakeFirstOrThrow();
  if (account.totp_enabled_at) return "code";
  const requiring = await db
    .selectFrom("members as m")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select("t.id")
    .where("m.account_id", "=", accountId)
    .where("t.require_two_factor", "=", true)
    .executeTakeFirst();
  return requiring ? "setup" : undefined;
}

/** A sign-in waiting for its second factor: its token (the browser keeps it for five minutes), never a session. */
export async function openChallenge(db: Db, accountId: number, memberId: number, need: "code" | "setup"): Promise<string> {
  const token = randomToken();
  await db
    .insertInto("sign_in_challenges")
    .values({ account_id: accountId, member_id: memberId, token_hash: hashToken(token), need, expires_at: sql<Date>`now() + make_interval(secs => ${CHALLENGE_SECONDS})` })
    .execute();
  return token;
}

/** The open challenge of this token, locked; each call spends one of its tries. */
async function takeChallenge(trx: Trx, token: string, need: "code" | "setup") {
  const challenge = await trx
    .updateTable("sign_in_challenges as c")
    .set((eb) => ({ attempts: eb("c.attempts", "+", 1) }))
    .where("c.token_hash", "=", hashToken(token))
    .where("c.used_at", "is", null)
    .where("c.expires_at", ">", sql<Date>`now()`)
    .where("c.attempts", "<", CHALLENGE_TRIES)
    .where("c.need", "=", need)
    .returning(["c.id", "c.account_id", "c.member_id"])
    .executeTakeFirst();
  if (!challenge) throw new AppError("CHALLENGE_INVALID");
  const account = await trx.selectFrom("accounts").select(["id", "email", "totp_secret", "totp_last_step"]).where("id", "=", challenge.account_id).executeTakeFirstOrThrow();
  return { challenge, account };
}

/**
 * The second factor of a sign-in: a code from the authenticator, or a
 * recovery code (which then works no more). Answers the member to open the
 * session for; a wrong code spends one of the challenge's five tries.
 */
export async function answerChallenge(db: Db, token: string, answer: { code?: string | undefined; recoveryCode?: string | undefined }, caller: Caller): Promise<{ memberId: number; email: string }> {
  const outcome = await inTransaction(db, async (trx) => {
    const { challenge, account } = await takeChallenge(trx, token, "code");
    let ok = false;
    if (answer.recoveryCode !== undefined) {
      const used = await trx
        .updateTable("recovery_codes")
        .set({ used_at: sql<Date>`now()` })
        .where("account_id", "=", account.id)
        .where("code_hash", "=", hashToken(normalizeCode(answer.recoveryCode)))
        .where("used_at", "is", null)
        .returning("id")
        .executeTakeFirst();
      ok = used !== undefined;
      if (ok) await recordAccountAudit(trx, account.id, { actor: account.email, action: "account.recovery_code_used", target: account.email, ...caller });
    } else if (answer.code !== undefined && account.totp_secret) {
      ok = await takeCode(trx, { id: account.id, email: account.email, secret: account.totp_secret, lastStep: account.totp_last_step === null ? null : Number(account.totp_last_step) }, answer.code);
    }
    if (ok) await trx.updateTable("sign_in_challenges").set({ used_at: sql<Date>`now()` }).where("id", "=", challenge.id).execute();
    return { ok, memberId: Number(challenge.member_id), email: account.email };
  });
  // The try is spent (committed) even when the code is wrong.
  if (!outcome.ok) throw new AppError("SECOND_FACTOR_INVALID", [{ path: answer.recoveryCode !== undefined ? "recovery_code" : "code", message: "is not right" }]);
  return outcome;
}

/** A setup a team requires, begun from the sign-in it holds up. */
export async function beginChallengeSetup(db: Db, token: string): Promise<TwoFactorSetup> {
  return inTransaction(db, async (trx) => {
    const { account } = await takeChallenge(trx, token, "setup");
    return beginSetup(trx, account.id, account.email);
  });
}

/** The required setup confirmed by a code: two-factor sign-in is on, the sign-in goes on, the recovery codes are answered once. */
export async function confirmChallengeSetup(db: Db, token: string, code: string, caller: Caller): Promise<{ memberId: number; email: string; recoveryCodes: string[] }> {
  return inTransaction(db, async (trx) => {
    const { challenge, account } = await takeChallenge(trx, token, "setup");
    const recoveryCodes = await confirmSetup(trx, account.id, code, caller);
    await trx.updateTable("sign_in_challenges").set({ used_at: sql<Date>`now()` }).where("id", "=", challenge.id).execute();
    return { memberId: Number(challenge.member_id), email: account.email, recoveryCodes };
  });
}
