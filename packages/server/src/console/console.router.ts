import { FLOWS, JOB_STATUSES, storeCreateSchema, storeUpdateSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import * as accounts from "../auth/member.service.js";
import { MIN_PASSWORD_LENGTH } from "../auth/password.js";
import * as tenants from "../auth/tenant.service.js";
import { storeActivity } from "../automations/activity.js";
import { AppError } from "../errors.js";
import * as imports from "../imports/import.repository.js";
import { toImport } from "../imports/import.view.js";
import { listRequests } from "../modules/requests/request-log.service.js";
import { router } from "../trpc.js";
import { memberProcedure, publicConsoleProcedure, SESSION_COOKIE } from "./console.procedure.js";

const id = z.number().int().positive();
const email = z.email().max(255).transform((value) => value.trim());
const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(200, "must be at most 200 characters");
const token = z.string().min(1).max(200);

type SignedIn = { email: string; team: { id: number; name: string } };

/**
 * The web console's procedures, served by tRPC's own HTTP handler under
 * /console/trpc. Everything a member does is scoped to the session's team;
 * another team's key, store or member answers as if it did not exist.
 */
export const consoleRouter = router({
  session: router({
    me: publicConsoleProcedure.query(async ({ ctx }): Promise<SignedIn | null> => {
      const session = await accounts.findSession(ctx.db, ctx.accounts.settings, ctx.http.cookie(SESSION_COOKIE));
      return session ? { email: session.email, team: { id: session.teamId, name: session.teamName } } : null;
    }),
    signIn: publicConsoleProcedure.input(z.object({ email: z.string().trim().min(1).max(255), password: z.string().min(1).max(1024) })).mutation(async ({ ctx, input }) => {
      const session = await accounts.signIn(ctx.db, ctx.accounts.settings, ctx.accounts.limiters, { ...input, address: ctx.http.address });
      ctx.http.setCookie(SESSION_COOKIE, session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
      return { ok: true as const };
    }),
    signOut: publicConsoleProcedure.mutation(async ({ ctx }) => {
      await accounts.signOut(ctx.db, ctx.http.cookie(SESSION_COOKIE));
      ctx.http.clearCookie(SESSION_COOKIE);
      return { ok: true as const };
    }),
  }),

  invitation: router({
    get: publicConsoleProcedure.input(z.object({ token })).query(({ ctx, input }) => accounts.describeInvitation(ctx.db, input.token)),
    accept: publicConsoleProcedure.input(z.object({ token, password })).mutation(async ({ ctx, input }) => {
      const session = await accounts.acceptInvitation(ctx.db, ctx.accounts.settings, input.token, input.password);
      ctx.http.setCookie(SESSION_COOKIE, session.token, { maxAgeSeconds: ctx.accounts.settings.sessionMaxSeconds });
      return { ok: true as const };
    }),
  }),

  keys: router({
    list: memberProcedure.query(({ ctx }) => tenants.listTeamKeys(ctx.db, ctx.session.teamId)),
    create: memberProcedure
      .input(z.object({ name: z.string().trim().min(1).max(255), store_id: id.nullish() }))
      .mutation(({ ctx, input }) => tenants.createApiKey(ctx.db, { team_id: ctx.session.teamId, name: input.name, store_id: input.store_id, created_by: ctx.session.memberId })),
    rename: memberProcedure
      .input(z.object({ id, name: z.string().trim().min(1).max(255) }))
      .mutation(({ ctx, input }) => tenants.renameApiKey(ctx.db, ctx.session.teamId, input.id, input.name)),
    /** A new key in place of this one; the old one works `overlap_seconds` more (up to 7 days), then is refused. */
    roll: memberProcedure
      .input(z.object({ id, overlap_seconds: z.number().int().min(0).max(tenants.MOST_ROLL_OVERLAP_SECONDS) }))
      .mutation(({ ctx, input }) => tenants.rollApiKey(ctx.db, { teamId: ctx.session.teamId, id: input.id, overlapSeconds: input.overlap_seconds, createdBy: ctx.session.memberId })),
    delete: memberProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      await tenants.deleteApiKey(ctx.db, input.id, ctx.session.teamId);
      return { ok: true as const };
    }),
  }),

  stores: router({
    list: memberProcedure.query(({ ctx }) => tenants.listStores(ctx.db, ctx.session.teamId)),
    create: memberProcedure
      .input(storeCreateSchema.omit({ team_id: true }))
      .mutation(({ ctx, input }) => tenants.createStore(ctx.db, { ...input, team_id: ctx.session.teamId })),
    update: memberProcedure
      .input(storeUpdateSchema.pick({ name: true, country: true, recovery_delay_seconds: true, paused: true }).extend({ id }))
      .mutation(async ({ ctx, input: { id: storeId, ...patch } }) => {
        await tenants.getTeamStore(ctx.db, ctx.session.teamId, storeId);
        return tenants.updateStore(ctx.db, storeId, patch);
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
          status: z.enum(["2xx", "4xx", "5xx"]).optional(),
          request_id: z.string().trim().max(128).optional(),
          limit: z.number().int().min(1).max(500).default(100),
        }),
      )
      .query(async ({ ctx, input }) => {
        await tenants.getTeamStore(ctx.db, ctx.session.teamId, input.store_id);
        return listRequests(ctx.db, { storeId: input.store_id, status: input.status, requestId: input.request_id || undefined, limit: input.limit });
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

  team: router({
    members: memberProcedure.query(async ({ ctx }) => ({ me: ctx.session.memberId, members: await accounts.listMembers(ctx.db, ctx.session.teamId) })),
    invitations: memberProcedure.query(({ ctx }) => accounts.listInvitations(ctx.db, ctx.session.teamId)),
    renewInvitation: memberProcedure.input(z.object({ id })).mutation(({ ctx, input }) => accounts.renewInvitation(ctx.db, ctx.accounts.settings, ctx.session.teamId, input.id)),
    revokeInvitation: memberProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
      await accounts.revokeInvitation(ctx.db, ctx.session.teamId, input.id);
      return { ok: true as const };
    }),
    invite: memberProcedure
      .input(z.object({ email }))
      .mutation(({ ctx, input }) => accounts.inviteMember(ctx.db, ctx.accounts.settings, { teamId: ctx.session.teamId, email: input.email, invitedBy: ctx.session.memberId })),
    remove: memberProcedure.input(z.object({ member_id: id })).mutation(async ({ ctx, input }) => {
      await accounts.removeMember(ctx.db, ctx.session.teamId, input.member_id);
      return { ok: true as const };
    }),
  }),
});

export type ConsoleRouter = typeof consoleRouter;
