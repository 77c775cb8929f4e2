import type { Db } from "../db/types.js";
import { inTransaction, formatTimestamp } from "../db/sql.js";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import { hashToken, randomToken } from "../tenancy/access.js";
import { recordAccountAudit } from "./audit.js";
import type { Mailer } from "./mail.js";
import { findAccountByEmail } from "./member.repository.js";
import type { AccountSettings, Caller, Session, SignInLimiters } from "./member.service.js";
import { hashPassword, verifyPassword } from "./password.js";
import * as repo from "./session.repository.js";

/** How long a password reset link works. */
export const RESET_SECONDS = 3600;

/**
 * Mails a reset link to the e-mail's account, if it has one. The answer is the
 * same either way and comes as fast (the mail leaves after it): asking tells
 * nothing about who has an account. Asking is throttled as signing in is.
 */
export async function requestPasswordReset(
  deps: { db: Db; settings: AccountSettings; limiters: SignInLimiters; mailer: Mailer; logger: Logger },
  email: string,
  caller: Caller,
): Promise<void> {
  const emailKey = email.trim().toLowerCase();
  const decision = await deps.limiters.byAccountAddress.consume(`reset|${emailKey}|${caller.address}`);
  if (!decision.allowed) throw new AppError("SIGN_IN_THROTTLED", undefined, { "Retry-After": String(decision.retryAfterSeconds) });
  const account = await findAccountByEmail(deps.db, emailKey);
  if (!account) return;
  const token = randomToken();
  await repo.insertPasswordReset(deps.db, account.id, hashToken(token), RESET_SECONDS);
  await recordAccountAudit(deps.db, account.id, { actor: account.email, action: "account.reset_requested", target: account.email, ...caller });
  const link = `${deps.settings.publicUrl}/reset/${token}`;
  void deps.mailer
    .send({
      to: account.email,
      subject: "Reset your Commerce Ingest password",
      text: `Someone (we hope you) asked to reset the password of ${account.email}.\n\nChoose a new one here, within an hour; the link works once:\n\n${link}\n\nEvery session of your account ends when you do. If you did not ask, ignore this mail: your password stays as it is.\n`,
    })
    .catch((error: unknown) => deps.logger.error({ err: error instanceof Error ? { message: error.message } : String(error) }, "could not send a password reset mail"));
}

/** Whether a reset link still works (the page asks before showing its form). */
export async function resetLinkUsable(db: Db, token: string): Promise<void> {
  if (!(await repo.resetUsable(db, hashToken(token)))) throw new AppError("RESET_INVALID");
}

/** A new password by a reset link (once, before it expires): every session of the account ends. */
export async function resetPassword(db: Db, token: string, password: string, caller: Caller): Promise<{ email: string }> {
  const passwordHash = await hashPassword(password);
  return inTransaction(db, async (trx) => {
    const accountId = await repo.takePasswordReset(trx, hashToken(token));
    if (accountId === undefined) throw new AppError("RESET_INVALID");
    await repo.setPasswordHash(trx, accountId, passwordHash);
    await repo.deleteAccountSessions(trx, accountId);
    const email = (await trx.selectFrom("accounts").select("email").where("id", "=", accountId).executeTakeFirstOrThrow()).email;
    await recordAccountAudit(trx, accountId, { actor: email, action: "account.password_reset", target: email, ...caller });
    return { email };
  });
}

/** A new password, the current one proven: every other session of the account ends (this one stays). */
export async function changePassword(db: Db, session: Session, current: string, next: string, caller: Caller): Promise<{ ended: number }> {
  const account = await findAccountByEmail(db, session.email);
  if (!account || !(await verifyPassword(current, account.password_hash))) {
    throw new AppError("PASSWORD_INCORRECT", [{ path: "current_password", message: "is not your current password" }]);
  }
  const passwordHash = await hashPassword(next);
  return inTransaction(db, async (trx) => {
    await repo.setPasswordHash(trx, account.id, passwordHash);
    const ended = await repo.deleteAccountSessions(trx, account.id, session.sessionId);
    await recordAccountAudit(trx, account.id, { actor: session.email, action: "account.password_changed", target: session.email, ...caller });
    return { ended };
  });
}

/** The account's live sessions: where and when each began and was last used; `current` marks the one asking. */
export async function listSessions(db: Db, settings: AccountSettings, session: Session) {
  return (await repo.listAccountSessions(db, session.accountId, settings.sessionIdleSeconds)).map((row) => ({
    id: Number(row.id),
    team: row.team_name,
    created_at: formatTimestamp(row.created_at),
    last_seen_at: formatTimestamp(row.last_seen_at),
    address: row.address,
    user_agent: row.user_agent,
    current: Number(row.id) === session.sessionId,
  }));
}

/** Ends one of the account's sessions (its next call is refused, its live view closes); another account's id is unknown. */
export async function endSession(db: Db, session: Session, id: number, caller: Caller): Promise<void> {
  if (!(await repo.deleteAccountSession(db, session.accountId, id))) throw new AppError("SESSION_NOT_FOUND");
  await recordAccountAudit(db, session.accountId, { actor: session.email, action: "session.ended", target: `session ${id}`, ...caller });
}

/** Ends every session of the account but the one asking. */
export async function endOtherSessions(db: Db, session: Session, caller: Caller): Promise<{ ended: number }> {
  const ended = await repo.deleteAccountSessions(db, session.accountId, session.sessionId);
  if (ended > 0) await recordAccountAudit(db, session.accountId, { actor: session.email, action: "session.ended", target: `${ended} other session${ended === 1 ? "" : "s"}`, ...caller });
  return { ended };
}
