import { activitySchema, apiKeyCreateSchema, apiKeySchema, createdApiKeySchema, storeCreateSchema, storeSchema, storeUpdateSchema, teamCreateSchema, teamSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { storeActivity } from "../automations/activity.js";
import { baseProcedure, middleware, rest, router } from "../trpc.js";
import { AppError } from "../errors.js";
import { bearerToken, secretsEqual, isLocalAddress, refuseBodyProblem } from "../tenancy/access.js";
import * as accounts from "../accounts/member.service.js";
import * as tenants from "../tenancy/tenant.service.js";
import { OPERATOR, recordAudit } from "../accounts/audit.js";

/** For the operator API: its body problems after its admin token. */
const requireJsonBody = middleware(({ ctx, next }) => {
  refuseBodyProblem(ctx);
  return next();
});

/**
 * The operator API: callers on this machine only (unless ADMIN_REMOTE), and a
 * bearer admin token compared in constant time. To anyone else it does not exist.
 */
const adminProcedure = baseProcedure.use(({ ctx, next }) => {
  if (!ctx.adminRemote && !isLocalAddress(ctx.address)) throw new AppError("NOT_FOUND");
  if (ctx.authorization === undefined) throw new AppError("ADMIN_TOKEN_MISSING");
  const token = bearerToken(ctx.authorization);
  if (token === undefined || !secretsEqual(token, ctx.adminToken)) throw new AppError("ADMIN_TOKEN_INVALID");
  return next();
});

const adminBodyProcedure = adminProcedure.use(requireJsonBody);

const invitationSchema = z.object({ team_id: z.number().int(), email: z.string(), url: z.string(), expires_at: z.string() });

// Ids in paths and query strings are text by nature: coercing them is right here, never in bodies.
const idParam = z.coerce.number().int().positive();
const tags = ["operator"];

export const adminRouter = router({
  teams: router({
    create: adminBodyProcedure
      .meta(rest({ method: "POST", path: "/admin/v1/teams", tags, summary: "Create a team" }))
      .input(teamCreateSchema)
      .output(teamSchema)
      .mutation(async ({ ctx, input }) => {
        ctx.response.status = 201;
        return tenants.createTeam(ctx.db, input.name);
      }),
    list: adminProcedure
      .meta(rest({ method: "GET", path: "/admin/v1/teams", tags, summary: "List teams" }))
      .input(z.object({}))
      .output(z.object({ data: z.array(teamSchema) }))
      .query(async ({ ctx }) => ({ data: await tenants.listTeams(ctx.db) })),
  }),
  stores: router({
    create: adminBodyProcedure
      .meta(rest({ method: "POST", path: "/admin/v1/stores", tags, summary: "Create a store" }))
      .input(storeCreateSchema)
      .output(storeSchema)
      .mutation(async ({ ctx, input }) => {
        ctx.response.status = 201;
        const store = await tenants.createStore(ctx.db, input);
        await recordAudit(ctx.db, { teamId: store.team_id, actor: OPERATOR, action: "store.created", target: `store ${store.id} (${store.name})` });
        return store;
      }),
    update: adminBodyProcedure
      .meta(rest({ method: "PATCH", path: "/admin/v1/stores/{id}", tags, summary: "Rename, pause, resume or configure a store" }))
      .input(storeUpdateSchema.extend({ id: idParam }))
      .output(storeSchema)
      .mutation(async ({ ctx, input: { id, ...patch } }) => {
        const store = await tenants.updateStore(ctx.db, id, patch);
        const action = patch.paused === true ? "store.paused" : patch.paused === false ? "store.resumed" : patch.name !== undefined ? "store.renamed" : "store.changed";
        await recordAudit(ctx.db, { teamId: store.team_id, actor: OPERATOR, action, target: `store ${store.id} (${store.name})` });
        return store;
      }),
    list: adminProcedure
      .meta(rest({ method: "GET", path: "/admin/v1/stores", tags, summary: "List stores" }))
      .input(z.object({ team_id: idParam.optional() }))
      .output(z.object({ data: z.array(storeSchema) }))
      .query(async ({ ctx, input }) => ({ data: await tenants.listStores(ctx.db, input.team_id) })),
    activity: adminProcedure
      .meta(rest({ method: "GET", path: "/admin/v1/stores/{id}/activity", tags, summary: "A store's recent automation runs and messages, newest first" }))
      .input(z.object({ id: idParam, limit: z.coerce.number().int().min(1).max(500).default(50) }))
      .output(activitySchema)
      .query(async ({ ctx, input }) => {
        await tenants.getStore(ctx.db, input.id);
        return storeActivity(ctx.db, input.id, input.limit);
      }),
  }),
  invitations: router({
    create: adminBodyProcedure
      .meta(rest({ method: "POST", path: "/admin/v1/invitations", tags, summary: "Invite a person to a team's console (a one-time link, valid 7 days)" }))
      .input(z.object({ team_id: z.number().int().positive(), email: z.email().max(255) }))
      .output(invitationSchema)
      .mutation(async ({ ctx, input }) => {
        await tenants.requireTeam(ctx.db, input.team_id);
        ctx.response.status = 201;
        const invitation = await accounts.inviteMember(ctx.db, ctx.accounts.settings, { teamId: input.team_id, email: input.email, invitedBy: null });
        await recordAudit(ctx.db, { teamId: input.team_id, actor: OPERATOR, action: "member.invited", target: invitation.email });
        return invitation;
      }),
  }),
  keys: router({
    create: adminBodyProcedure
      .meta(rest({ method: "POST", path: "/admin/v1/keys", tags, summary: "Create an API key (its value is shown once)" }))
      .input(apiKeyCreateSchema)
      .output(createdApiKeySchema)
      .mutation(async ({ ctx, input }) => {
        ctx.response.status = 201;
        const key = await tenants.createApiKey(ctx.db, input);
        await recordAudit(ctx.db, { teamId: key.team_id, actor: OPERATOR, action: "key.created", target: `${key.name} (…${key.last4})` });
        return key;
      }),
    list: adminProcedure
      .meta(rest({ method: "GET", path: "/admin/v1/keys", tags, summary: "List a team's API keys (never their values)" }))
      .input(z.object({ team_id: idParam }))
      .output(z.object({ data: z.array(apiKeySchema) }))
      .query(async ({ ctx, input }) => ({ data: await tenants.listApiKeys(ctx.db, input.team_id) })),
    delete: adminProcedure
      .meta(rest({ method: "DELETE", path: "/admin/v1/keys/{id}", tags, summary: "Delete an API key, effective on the next request" }))
      .input(z.object({ id: idParam }))
      .output(z.void())
      .mutation(async ({ ctx, input }) => {
        const deleted = await tenants.deleteApiKey(ctx.db, input.id);
        await recordAudit(ctx.db, { teamId: deleted.team_id, actor: OPERATOR, action: "key.deleted", target: `${deleted.name} (…${deleted.last4})` });
        ctx.response.status = 204;
      }),
  }),
});
