import { FLOWS, JOB_STATUSES, storeCreateSchema, storeUpdateSchema, timestampSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { AUDIT_ACTIONS, listAudit, recordAudit, type AuditAction } from "../../accounts/audit.js";
import * as accounts from "../../accounts/member.service.js";
import { MIN_PASSWORD_LENGTH } from "../../accounts/password.js";
import * as tenants from "../../tenancy/tenant.service.js";
import { storeActivity } from "../../automations/activity.js";
import { inTransaction } from "../../db/sql.js";
import { AppError } from "../../errors.js";
import * as imports from "../../imports/import.repository.js";
import { toImport } from "../../imports/import.view.js";
import { unknownKeys } from "../../requests/request-log.repository.js";
import { listRequests } from "../../requests/request-log.service.js";
import { checkoutReadBack } from "../../records/checkouts/checkout.service.js";
import { customerReadBack } from "../../records/customers/customer.service.js";
import { orderReadBack } from "../../records/orders/order.service.js";
import { shipmentReadBack } from "../../records/shipments/shipment.service.js";
import { router } from "../../trpc.js";
import { memberProcedure, ownerProcedure, publicConsoleProcedure, SESSION_COOKIE } from "./console.procedure.js";
import * as security from "../../accounts/session.service.js";
import * as twoFactor from "../../accounts/two-factor.service.js";
import { setRole } from "../../accounts/session.repository.js";
import { deliveryRouters } from "./delivery.router.js";
import { storeOverview } from "./overview.js";
import type { Mailer } from "../../accounts/mail.js";

const id = z.number().int().positive();
const email = z.email().max(255).transform((value) => value.trim());
const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(200, "must be at most 200 characters");
const token = z.string().min(1).max(200);

type SignedIn = { email: string; role: "owner" | "member"; team: { id: number; name: string }; teams: Array<{ id: number; name: string }> };

/** What a member changed, in the team's audit log. */
const audit = (ctx: { db: Parameters<typeof recordAudit>[0]; session: { teamId: number; email: string } }, action: AuditAction, target: string) =>
  recordAudit(ctx.db, { teamId: ctx.session.teamId, actor: ctx.session.email, action, target });

/**
 * An invitation link goes to the person invited: by mail when the service has a mail sender, and then the inviter
 * never sees it (`url` null); without one, the inviter copies it to them (a newcomer's service sends no mail).
 */
async function mailInvitation(
  ctx: { accounts: { mailer: Mailer }; session: { email: string; teamName: string } },
  invitation: { email: string; url: string; expires_at: string; team_id: number },
): Promise<{ email: string; url: string | null; expires_at: string; team_id: number; mailed: boolean }> {
  if (!ctx.accounts.mailer.configured) return { ...invitation, mailed: false };
  await ctx.accounts.mailer.send({
    to: invitation.email,
    subject: `Join ${ctx.session.teamName} on Commerce Ingest`,
    text: `${ctx.session.email} invites you to the team ${ctx.session.teamName} on Commerce Ingest.\n\nAccept here (the link works once, until ${invitation.expires_at}):\n\n${invitation.url}\n\nIf you have an account already, sign in first; otherwise you choose a password.\n`,
  });
  return { ...invitation, url: null, mailed: true };
}

/**
 * The web console's procedures, served by tRPC's own HTTP handler under
 * /console/trpc. Everything a member does is scoped to the session's team;
 * another team's key, store or member answers as if it did not exist.
 */
export const consoleRouter = router({
  session: router({
    me: publicConsoleProcedure.query(async ({ ctx }): Promise<SignedIn | null> => {
      const session = await accounts.findSession(ctx.db, ctx.accounts.settings, ctx.http.cookie(SESSION_COOKIE));
      if (!session) return null;
      const teams = (await accounts.listTeams(ctx.db, session)).map(({ id, name }) => ({ id, name }));
      return { email: session.email, role: session.role, team: { id: session.teamId, name: session.teamName }, teams };
    }),
    /** Shows another team the account belongs to; any other team answers as unknown. */
    switchTeam: memberProcedure.input(z.object({ team_id: id })).mutation(({ ctx, input }) => accounts.switchTeam(ctx.db, ctx.session, input.team_id)),
    signIn: publicConsoleProcedure.input(z.object({ email: z.string().trim().min(1).max(255), password: z.string().min(1).max(1024) })).mutation(async ({ ctx, input }) => {
      const outcome = await accounts.signIn(ctx.db, ctx.accounts.settings, ctx.accounts.limiters, { ...input, address: ctx.http.address, userAgent: ctx.http.userAgent });
      // A second factor to come: the browser answers it with this challenge (five minutes, five tries); no session yet.
      if ("challenge" in outcome) return { ok: false as const, second_factor: outcome.need, challenge: outcome.challenge };
      ctx.http.setCookie(SESSION_COOKIE, outcome.session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
      return { ok: true as const };
    }),
    /** A sign-in's second factor: the authenticator's code, or a recovery code (once). */
    secondFactor: publicConsoleProcedure
      .input(z.object({ challenge: token, code: z.string().trim().min(1).max(20).optional(), recovery_code: z.string().trim().min(1).max(40).optional() }))
      .mutation(async ({ ctx, input }) => {
        const caller = { address: ctx.http.address, userAgent: ctx.http.userAgent };
        const member = await twoFactor.answerChallenge(ctx.db, input.challenge, { code: input.code, recoveryCode: input.recovery_code }, caller);
        const session = await accounts.openSession(ctx.db, ctx.accounts.settings, member, caller, input.recovery_code !== undefined ? " (recovery code)" : " (two-factor)");
        ctx.http.setCookie(SESSION_COOKIE, session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
        return { ok: true as const };
      }),
    /** A team requires two-factor sign-in the account does not have yet: its setup, from the sign-in it holds up. */
    setupBegin: publicConsoleProcedure.input(z.object({ challenge: token })).mutation(({ ctx, input }) => twoFactor.beginChallengeSetup(ctx.db, input.challenge)),
    setupConfirm: publicConsoleProcedure.input(z.object({ challenge: token, code: z.string().trim().min(1).max(20) })).mutation(async ({ ctx, input }) => {
      const caller = { address: ctx.http.address, userAgent: ctx.http.userAgent };
      const done = await twoFactor.confirmChallengeSetup(ctx.db, input.challenge, input.code, caller);
      const session = await accounts.openSession(ctx.db, ctx.accounts.settings, done, caller, " (two-factor set up)");
      ctx.http.setCookie(SESSION_COOKIE, session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
      return { recovery_codes: done.recoveryCodes };
    }),
    signOut: publicConsoleProcedure.mutation(async ({ ctx }) => {
      const session = await accounts.findSession(ctx.db, ctx.accounts.settings, ctx.http.cookie(SESSION_COOKIE));
      await accounts.signOut(ctx.db, ctx.http.cookie(SESSION_COOKIE));
      if (session) {
        await recordAudit(ctx.db, { teamId: session.teamId, actor: session.email, action: "session.signed_out", target: session.email, address: ctx.http.address, userAgent: ctx.http.userAgent });
      }
      ctx.http.clearCookie(SESSION_COOKIE);
      return { ok: true as const };
    }),
    /** Two-factor sign-in of the account: on or off, recovery codes left, the teams that require it. */
    twoFactor: memberProcedure.query(({ ctx }) => twoFactor.twoFactorStatus(ctx.db, ctx.session)),
    /** A new authenticator secret (shown here once, as a key and an otpauth:// URI), in force once a code from it is confirmed. */
    twoFactorBegin: memberProcedure.mutation(({ ctx }) => twoFactor.beginTwoFactor(ctx.db, ctx.session)),
    twoFactorConfirm: memberProcedure
      .input(z.object({ code: z.string().trim().min(1).max(20) }))
      .mutation(({ ctx, input }) => twoFactor.confirmTwoFactor(ctx.db, ctx.session, input.code, ctx.caller)),
    twoFactorDisable: memberProcedure.input(z.object({ password: z.string().min(1).max(1024) })).mutation(async ({ ctx, input }) => {
      await twoFactor.disableTwoFactor(ctx.db, ctx.session, input.password, ctx.caller);
      return { ok: true as const };
    }),
    recoveryCodes: memberProcedure.mutation(({ ctx }) => twoFactor.renewRecoveryCodes(ctx.db, ctx.session)),
    /** The account's live sessions (every team), where and when each began and was last used. */
    list: memberProcedure.query(({ ctx }) => security.listSessions(ctx.db, ctx.accounts.settings, ctx.session)),
    /** Ends one of the account's sessions: its next call is refused and its live view closes. */
    end: memberProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      await security.endSession(ctx.db, ctx.session, input.id, ctx.caller);
      return { ok: true as const };
    }),
    endOthers: memberProcedure.mutation(({ ctx }) => security.endOtherSessions(ctx.db, ctx.session, ctx.caller)),
    /** A new password, the current one proven; every other session of the account ends. */
    changePassword: memberProcedure
      .input(z.object({ current_password: z.string().min(1).max(1024), new_password: password }))
      .mutation(({ ctx, input }) => security.changePassword(ctx.db, ctx.session, input.current_password, input.new_password, ctx.caller)),
    /** Mails a reset link to the e-mail's account, if any; the answer is the same either way. */
    requestReset: publicConsoleProcedure.input(z.object({ email: z.string().trim().min(1).max(255) })).mutation(async ({ ctx, input }) => {
      await security.requestPasswordReset(
        { db: ctx.db, settings: ctx.accounts.settings, limiters: ctx.accounts.limiters, mailer: ctx.accounts.mailer, logger: ctx.logger },
        input.email,
        { address: ctx.http.address, userAgent: ctx.http.userAgent },
      );
      return { ok: true as const };
    }),
    /** Whether a reset link still works. */
    resetUsable: publicConsoleProcedure.input(z.object({ token })).query(async ({ ctx, input }) => {
      await security.resetLinkUsable(ctx.db, input.token);
      return { ok: true as const };
    }),
    /** A new password by a reset link (once, within the hour); every session of the account ends. Sign in after. */
    reset: publicConsoleProcedure.input(z.object({ token, password })).mutation(async ({ ctx, input }) => {
      const { email: reset } = await security.resetPassword(ctx.db, input.token, input.password, { address: ctx.http.address, userAgent: ctx.http.userAgent });
      return { email: reset };
    }),
  }),

  invitation: router({
    get: publicConsoleProcedure.input(z.object({ token })).query(({ ctx, input }) => accounts.describeInvitation(ctx.db, input.token)),
    /** A password chosen on the link: a mail goes to the invitation's e-mail, whatever it is (see `acceptInvitation`). */
    accept: publicConsoleProcedure.input(z.object({ token, password })).mutation(async ({ ctx, input }) => {
      await accounts.acceptInvitation(ctx.db, ctx.accounts.settings, ctx.accounts.mailer, ctx.logger, input.token, input.password);
      return { check_email: true as const };
    }),
    /** The mailed link that proves the e-mail: the account is made, joins the team and is signed in. */
    verify: publicConsoleProcedure.input(z.object({ token })).mutation(async ({ ctx, input }) => {
      const session = await accounts.verifyInvitation(ctx.db, ctx.accounts.settings, input.token, { address: ctx.http.address, userAgent: ctx.http.userAgent });
      ctx.http.setCookie(SESSION_COOKIE, session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
      return { ok: true as const };
    }),
    /** Accepts as the signed-in account (an e-mail that has an account already); the console then shows the team joined. */
    join: memberProcedure.input(z.object({ token })).mutation(({ ctx, input }) => accounts.joinTeam(ctx.db, ctx.session, input.token)),
  }),

  keys: router({
    list: memberProcedure.query(({ ctx }) => tenants.listTeamKeys(ctx.db, ctx.session.teamId)),
    create: memberProcedure.input(z.object({ name: z.string().trim().min(1).max(255), store_id: id.nullish() })).mutation(async ({ ctx, input }) => {
      const key = await tenants.createApiKey(ctx.db, { team_id: ctx.session.teamId, name: input.name, store_id: input.store_id, created_by: ctx.session.memberId });
      await audit(ctx, "key.created", `${key.name} (…${key.last4})${key.store_id === null ? "" : `, store ${key.store_id} only`}`);
      return key;
    }),
    rename: memberProcedure.input(z.object({ id, name: z.string().trim().min(1).max(255) })).mutation(async ({ ctx, input }) => {
      const renamed = await tenants.renameApiKey(ctx.db, ctx.session.teamId, input.id, input.name);
      // A key is named as the team knows it: its name and last four characters, never its internal id.
      await audit(ctx, "key.renamed", `${renamed.previous_name} (…${renamed.last4}) to ${renamed.name}`);
      return { id: renamed.id, name: renamed.name };
    }),
    /** A new key in place of this one; the old one works `overlap_seconds` more (up to 7 days), then is refused. */
    roll: memberProcedure.input(z.object({ id, overlap_seconds: z.number().int().min(0).max(tenants.MOST_ROLL_OVERLAP_SECONDS) })).mutation(async ({ ctx, input }) => {
      const rolled = await tenants.rollApiKey(ctx.db, { teamId: ctx.session.teamId, id: input.id, overlapSeconds: input.overlap_seconds, createdBy: ctx.session.memberId });
      await audit(ctx, "key.rolled", `${rolled.key.name}: …${rolled.key.last4} in place of …${rolled.previous_last4}, which works until ${rolled.previous_expires_at}`);
      return { key: rolled.key, previous_expires_at: rolled.previous_expires_at };
    }),
    delete: memberProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      const deleted = await tenants.deleteApiKey(ctx.db, input.id, ctx.session.teamId);
      await audit(ctx, "key.deleted", `${deleted.name} (…${deleted.last4})`);
      return { ok: true as const };
    }),
  }),

  stores: router({
    list: memberProcedure.query(({ ctx }) => tenants.listStores(ctx.db, ctx.session.teamId)),
    create: memberProcedure.input(storeCreateSchema.omit({ team_id: true })).mutation(async ({ ctx, input }) => {
      const store = await tenants.createStore(ctx.db, { ...input, team_id: ctx.session.teamId });
      await audit(ctx, "store.created", `store ${store.id} (${store.name})`);
      return store;
    }),
    update: memberProcedure
      .input(storeUpdateSchema.pick({ name: true, country: true, recovery_delay_seconds: true, paused: true, log_bodies: true }).extend({ id }))
      .mutation(async ({ ctx, input: { id: storeId, ...patch } }) => {
        await tenants.getTeamStore(ctx.db, ctx.session.teamId, storeId);
        const store = await tenants.updateStore(ctx.db, storeId, patch);
        const what = `store ${store.id} (${store.name})`;
        if (patch.paused !== undefined) await audit(ctx, patch.paused ? "store.paused" : "store.resumed", what);
        if (patch.name !== undefined) await audit(ctx, "store.renamed", what);
        const settings = [
          patch.country !== undefined ? `country ${store.country ?? "none"}` : "",
          patch.recovery_delay_seconds !== undefined ? `recovery delay ${store.recovery_delay_seconds} s` : "",
          patch.log_bodies !== undefined ? `call bodies ${store.log_bodies ? "kept" : "not kept"}` : "",
        ].filter(Boolean);
        if (settings.length > 0) await audit(ctx, "store.changed", `${what}: ${settings.join(", ")}`);
        return store;
      }),
  }),

  overview: router({
    get: memberProcedure.input(z.object({ store_id: id, range: z.enum(["24h", "7d"]).default("24h") })).query(async ({ ctx, input }) => {
      await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
      return storeOverview(ctx.db, input.store_id, input.range);
    }),
  }),

  activity: router({
    list: memberProcedure
      .input(z.object({ store_id: id, flow: z.enum(FLOWS).optional(), status: z.enum(JOB_STATUSES).optional(), limit: z.number().int().min(1).max(500).default(50) }))
      .query(async ({ ctx, input }) => {
        await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
        return storeActivity(ctx.db, input.store_id, input.limit, { flow: input.flow, status: input.status });
      }),
  }),

  requests: router({
    list: memberProcedure
      .input(
        z.object({
          store_id: id,
          status: z
            .string()
            .trim()
            .regex(/^(?:[1-5]xx|[1-5][0-9]{2})$/, "must be a status, such as 422, or a class: 2xx, 4xx or 5xx")
            .optional(),
          code: z.string().trim().regex(/^[a-z_]{1,64}$/, "must be an error code, such as validation_failed").optional(),
          route: z.string().trim().startsWith("/", "must be a route, such as /api/v1/stores/{store_id}/orders").max(200).optional(),
          key_id: id.optional(),
          external_id: z.string().trim().min(1).max(255).optional(),
          request_id: z.string().trim().max(128).optional(),
          from: timestampSchema.optional(),
          to: timestampSchema.optional(),
          before: z.object({ at: timestampSchema, id }).optional(),
          limit: z.number().int().min(1).max(500).default(100),
        }),
      )
      .query(async ({ ctx, input }) => {
        await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
        return listRequests(ctx.db, {
          storeId: input.store_id,
          status: input.status,
          code: input.code,
          route: input.route,
          keyId: input.key_id,
          externalId: input.external_id,
          requestId: input.request_id || undefined,
          from: input.from,
          to: input.to,
          before: input.before,
          limit: input.limit,
        });
      }),
  }),

  /** Calls to the store's paths with keys no team has: each key's first characters, how many calls, first and last seen. */
  unknownKeys: router({
    list: memberProcedure.input(z.object({ store_id: id })).query(async ({ ctx, input }) => {
      await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
      return (await unknownKeys(ctx.db, input.store_id)).map((row) => ({ ...row, first_at: row.first_at.toISOString(), last_at: row.last_at.toISOString() }));
    }),
  }),

  imports: router({
    list: memberProcedure.input(z.object({ store_id: id })).query(async ({ ctx, input }) => {
      await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
      const at = new Date();
      return (await imports.listImports(ctx.db, input.store_id, 50)).map((row) => toImport(row, at));
    }),
    /** An import's refused lines after `after_line`, 5,000 at most: the console saves them as a file. */
    errors: memberProcedure.input(z.object({ store_id: id, import_id: id, after_line: z.number().int().min(0).default(0) })).query(async ({ ctx, input }) => {
      await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
      const found = await imports.findImport(ctx.db, input.store_id, input.import_id);
      if (!found) throw new AppError("IMPORT_NOT_FOUND");
      return (await imports.importErrors(ctx.db, found.id, input.after_line, 5000)).map((row) => ({ ...row, details: (row.details ?? undefined) as Array<{ path: string; message: string }> | undefined }));
    }),
  }),

  /** The live view's detail of one call: what it answered, the record it wrote (read back now) and the automation runs that record has. */
  live: router({
    detail: memberProcedure.input(z.object({ store_id: id, id })).query(async ({ ctx, input }) => {
      const store = await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
      const entry = await ctx.db
        .selectFrom("request_log as r")
        .leftJoin("api_keys as k", "k.id", "r.key_id")
        .select([
          "r.id",
          "r.created_at",
          "r.method",
          "r.route",
          "r.path",
          "r.status",
          "r.code",
          "r.error",
          "r.details",
          "r.request_id",
          "r.latency_ms",
          "r.request_body",
          "r.response_body",
          "k.name as key_name",
          "k.last4 as key_last4",
          "r.record_kind",
          "r.record_external_id",
        ])
        .where("r.store_id", "=", store.id)
        .where("r.id", "=", input.id)
        .executeTakeFirst();
      if (!entry) throw new AppError("NOT_FOUND");
      const context = { id: store.id, teamId: store.team_id, country: store.country, recoveryDelaySeconds: store.recovery_delay_seconds };
      const kind = entry.record_kind;
      const key = entry.record_external_id;
      const readers = { orders: orderReadBack, customers: customerReadBack, checkouts: checkoutReadBack, shipments: shipmentReadBack } as const;
      const reader = kind && kind in readers ? readers[kind as keyof typeof readers] : undefined;
      // Read back as it is now (never the body as sent); gone (erased) since: null.
      const record = reader && key !== null ? await reader.get(ctx.db, context, key).catch(() => null) : null;
      const recordType = { orders: "order", customers: "customer", checkouts: "checkout", shipments: "shipment" } as const;
      const runs =
        kind && key !== null && kind in recordType
          ? await ctx.db
              .selectFrom("automation_jobs")
              .select(["id", "flow", "status", "attempts", "last_error", "run_at", "finished_at", "created_at"])
              .where("store_id", "=", store.id)
              .where("record_type", "=", recordType[kind as keyof typeof recordType])
              .where("record_external_id", "=", key)
              .orderBy("id")
              .limit(50)
              .execute()
          : [];
      return {
        id: entry.id,
        at: entry.created_at.toISOString(),
        method: entry.method,
        route: entry.route,
        path: entry.path,
        status: entry.status,
        code: entry.code,
        error: entry.error,
        request_body: entry.request_body,
        response_body: entry.response_body,
        details: (entry.details ?? null) as Array<{ path: string; message: string }> | null,
        request_id: entry.request_id,
        latency_ms: Math.round(entry.latency_ms * 10) / 10,
        key: entry.key_name === null ? null : { name: entry.key_name, last4: entry.key_last4 ?? "" },
        record: kind && key !== null ? { kind, external_id: key, stored: record } : null,
        runs: runs.map((run) => ({ ...run, run_at: run.run_at.toISOString(), finished_at: run.finished_at?.toISOString() ?? null, created_at: run.created_at.toISOString() })),
      };
    }),
  }),

  team: router({
    members: memberProcedure.query(async ({ ctx }) => ({ me: ctx.session.memberId, members: await accounts.listMembers(ctx.db, ctx.session.teamId) })),
    invitations: memberProcedure.query(({ ctx }) => accounts.listInvitations(ctx.db, ctx.session.teamId)),
    renewInvitation: ownerProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      const renewed = await accounts.renewInvitation(ctx.db, ctx.accounts.settings, ctx.session.teamId, input.id);
      await audit(ctx, "invitation.renewed", renewed.email);
      return mailInvitation(ctx, renewed);
    }),
    revokeInvitation: ownerProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      const { email: revoked } = await accounts.revokeInvitation(ctx.db, ctx.session.teamId, input.id);
      await audit(ctx, "invitation.revoked", revoked);
      return { ok: true as const };
    }),
    invite: ownerProcedure.input(z.object({ email })).mutation(async ({ ctx, input }) => {
      const invitation = await accounts.inviteMember(ctx.db, ctx.accounts.settings, { teamId: ctx.session.teamId, email: input.email, invitedBy: ctx.session.memberId });
      await audit(ctx, "member.invited", invitation.email);
      return mailInvitation(ctx, invitation);
    }),
    remove: ownerProcedure.input(z.object({ member_id: id })).mutation(async ({ ctx, input }) => {
      const removed = await accounts.removeMember(ctx.db, ctx.session.teamId, input.member_id);
      await audit(ctx, "member.removed", removed.email);
      return { ok: true as const };
    }),
    /** Who changed the team's keys, stores and members, newest first, 100 at a time (`before`: the last id of the page before). */
    /** The team's settings: whether it requires two-factor sign-in of its members. */
    settings: memberProcedure.query(async ({ ctx }) => {
      const team = await ctx.db.selectFrom("teams").select(["require_two_factor"]).where("id", "=", ctx.session.teamId).executeTakeFirstOrThrow();
      return { require_two_factor: team.require_two_factor };
    }),
    /** Requires two-factor sign-in of every member (from each one's next sign-in), or stops requiring it. */
    updateSettings: ownerProcedure.input(z.object({ require_two_factor: z.boolean() })).mutation(async ({ ctx, input }) => {
      await ctx.db.updateTable("teams").set({ require_two_factor: input.require_two_factor }).where("id", "=", ctx.session.teamId).execute();
      await recordAudit(ctx.db, { teamId: ctx.session.teamId, actor: ctx.session.email, action: "team.two_factor_required", target: input.require_two_factor ? "required" : "not required", ...ctx.caller });
      return { require_two_factor: input.require_two_factor };
    }),
    /** Makes a member an owner or an owner a member; a team keeps at least one owner. */
    setRole: ownerProcedure.input(z.object({ member_id: id, role: z.enum(["owner", "member"]) })).mutation(async ({ ctx, input }) => {
      const changed = await inTransaction(ctx.db, (trx) => setRole(trx, ctx.session.teamId, input.member_id, input.role));
      if (changed === "unknown") throw new AppError("MEMBER_NOT_FOUND");
      if (changed === "last") throw new AppError("LAST_OWNER");
      await recordAudit(ctx.db, { teamId: ctx.session.teamId, actor: ctx.session.email, action: "member.role_changed", target: `${changed.email}: ${input.role}`, ...ctx.caller });
      return { ok: true as const };
    }),
    audit: memberProcedure
      .input(z.object({ before: id.optional(), action: z.enum(AUDIT_ACTIONS as [AuditAction, ...AuditAction[]]).optional(), actor: z.string().trim().min(1).max(255).optional() }))
      .query(({ ctx, input }) => listAudit(ctx.db, ctx.session.teamId, { limit: 100, before: input.before, action: input.action, actor: input.actor })),
  }),

  ...deliveryRouters,
});

export type ConsoleRouter = typeof consoleRouter;
