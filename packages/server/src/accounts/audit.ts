import type { Db, Executor } from "../db/types.js";
import { formatTimestamp } from "../db/sql.js";

/** What the audit log records: changes to a team's keys, stores, members and delivery. */
export type AuditAction =
  | "key.created"
  | "key.renamed"
  | "key.rolled"
  | "key.deleted"
  | "store.created"
  | "store.renamed"
  | "store.changed"
  | "store.paused"
  | "store.resumed"
  | "member.invited"
  | "invitation.renewed"
  | "invitation.revoked"
  | "member.joined"
  | "member.removed"
  | "endpoint.set"
  | "endpoint.secret_rolled"
  | "endpoint.removed"
  | "message.resent"
  | "session.signed_in"
  | "session.signed_out"
  | "session.sign_in_failed"
  | "session.ended"
  | "account.password_changed"
  | "account.reset_requested"
  | "account.password_reset"
  | "member.role_changed"
  | "account.two_factor_enabled"
  | "account.two_factor_disabled"
  | "account.recovery_code_used"
  | "team.two_factor_required";

export const AUDIT_ACTIONS: readonly AuditAction[] = [
  "key.created", "key.renamed", "key.rolled", "key.deleted",
  "store.created", "store.renamed", "store.changed", "store.paused", "store.resumed",
  "member.invited", "invitation.renewed", "invitation.revoked", "member.joined", "member.removed", "member.role_changed",
  "endpoint.set", "endpoint.secret_rolled", "endpoint.removed", "message.resent",
  "session.signed_in", "session.signed_out", "session.sign_in_failed", "session.ended",
  "account.password_changed", "account.reset_requested", "account.password_reset",
  "account.two_factor_enabled", "account.two_factor_disabled", "account.recovery_code_used", "team.two_factor_required",
];

/** The operator API's changes are the operator's; the console's, the signed-in member's. */
export const OPERATOR = "operator";

export async function recordAudit(
  db: Executor,
  entry: { teamId: number; actor: string; action: AuditAction; target: string; address?: string | undefined; userAgent?: string | null | undefined },
): Promise<void> {
  await db
    .insertInto("audit_log")
    .values({ team_id: entry.teamId, actor: entry.actor, action: entry.action, target: entry.target, address: entry.address ?? null, user_agent: entry.userAgent ?? null })
    .execute();
}

/** An account's own act (a sign-in's second factor, a password or two-factor change), in the log of every team it belongs to. */
export async function recordAccountAudit(
  db: Executor,
  accountId: number,
  entry: { actor: string; action: AuditAction; target: string; address?: string | undefined; userAgent?: string | null | undefined },
): Promise<void> {
  const teams = await db.selectFrom("members").select("team_id").where("account_id", "=", accountId).execute();
  for (const { team_id } of teams) await recordAudit(db, { teamId: Number(team_id), ...entry });
}

/** The team's audit log, newest first, a page of `limit` before the entry `before` (when given). */
export async function listAudit(
  db: Db,
  teamId: number,
  page: { limit: number; before?: number | undefined; action?: AuditAction | undefined; actor?: string | undefined },
) {
  let query = db.selectFrom("audit_log").select(["id", "actor", "action", "target", "address", "user_agent", "created_at"]).where("team_id", "=", teamId);
  if (page.before !== undefined) query = query.where("id", "<", page.before);
  if (page.action !== undefined) query = query.where("action", "=", page.action);
  if (page.actor !== undefined) query = query.where("actor", "=", page.actor);
  const rows = await query.orderBy("id", "desc").limit(page.limit).execute();
  return rows.map((row) => ({ ...row, created_at: formatTimestamp(row.created_at) }));
}
