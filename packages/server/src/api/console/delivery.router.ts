import { FLOWS, MESSAGE_STATUSES } from "@commerce-ingest/shared";
import { z } from "zod";
import { recordAudit } from "../../accounts/audit.js";
import * as delivery from "../../automations/delivery.service.js";
import { recentAttempts } from "../../automations/endpoints.repository.js";
import { listStoreMessages, runsOfRecord } from "../../automations/messages.repository.js";
import type { RecordType } from "../../db/types.js";
import { checkoutReadBack } from "../../records/checkouts/checkout.service.js";
import { customerReadBack } from "../../records/customers/customer.service.js";
import { orderReadBack } from "../../records/orders/order.service.js";
import { shipmentReadBack } from "../../records/shipments/shipment.service.js";
import { maskPhone } from "../../requests/request-log.service.js";
import * as tenants from "../../tenancy/tenant.service.js";
import { router } from "../../trpc.js";
import { memberProcedure } from "./console.procedure.js";

const id = z.number().int().positive();
const externalId = z.string().trim().min(1).max(255);
/** A message's id; any other text names no message (404 as an unknown one, never a 400 that tells them apart). */
const messageId = z.string().max(64);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Ctx = { db: Parameters<typeof recordAudit>[0]; session: { teamId: number; email: string } };
const audit = (ctx: Ctx, action: Parameters<typeof recordAudit>[1]["action"], target: string) =>
  recordAudit(ctx.db, { teamId: ctx.session.teamId, actor: ctx.session.email, action, target });

/** The store of the session's team, or 404 as for a store that does not exist. */
const teamStore = (ctx: { db: Parameters<typeof tenants.getTeamStore>[0]; session: { teamId: number } }, storeId: number) => tenants.getTeamStore(ctx.db, ctx.session.teamId, storeId);

/** A message's recipient as the console shows it: enough to tell two apart, not to call one. */
const masked = <M extends { to_phone: string | null }>(message: M) => ({ ...message, to_phone: message.to_phone === null ? null : maskPhone(message.to_phone) });

const KINDS = { orders: "order", customers: "customer", checkouts: "checkout", shipments: "shipment" } as const satisfies Record<string, RecordType>;
const READERS = { orders: orderReadBack, customers: customerReadBack, checkouts: checkoutReadBack, shipments: shipmentReadBack } as const;

/**
 * Delivery in the console: a store's messages (with every attempt and what the
 * endpoint answered; a failed one sent again), a record's page, and the
 * store's own endpoint (set, secret rolled with an overlap, test event,
 * recent deliveries). Another team's store, message or record answers 404 as
 * one that does not exist.
 */
export const deliveryRouters = {
  messages: router({
    list: memberProcedure
      .input(
        z.object({
          store_id: id,
          flow: z.enum(FLOWS).optional(),
          status: z.enum(MESSAGE_STATUSES).optional(),
          customer: externalId.optional(),
          order: externalId.optional(),
          before: z.string().regex(UUID, "must be a message id").optional(),
          limit: z.number().int().min(1).max(200).default(50),
        }),
      )
      .query(async ({ ctx, input }) => {
        await teamStore(ctx, input.store_id);
        const page = await delivery.storeMessages(ctx.db, input.store_id, input.limit, input);
        return { ...page, messages: page.messages.map(masked) };
      }),
    /** A failed message sent again (its run due now, attempts afresh); one not failed is left as it is. */
    resend: memberProcedure.input(z.object({ store_id: id, id: messageId })).mutation(async ({ ctx, input }) => {
      const store = await teamStore(ctx, input.store_id);
      if (!UUID.test(input.id)) throw new delivery.MessageNotFound();
      const result = await delivery.resendMessage(ctx.db, store.id, input.id);
      if (result.resent) {
        await audit(ctx, "message.resent", `message ${input.id} of store ${store.id} (${store.name})`);
        ctx.afterWrite?.();
      }
      return result;
    }),
  }),

  /** A record's page: the record as stored now, its automation runs and the messages they sent. */
  records: router({
    get: memberProcedure
      .input(z.object({ store_id: id, kind: z.enum(["orders", "customers", "checkouts", "shipments"]), external_id: externalId }))
      .query(async ({ ctx, input }) => {
        const store = await teamStore(ctx, input.store_id);
        const context = { id: store.id, teamId: store.team_id, country: store.country, recoveryDelaySeconds: store.recovery_delay_seconds };
        const record = (await READERS[input.kind].get(ctx.db, context, input.external_id)) as Record<string, unknown>;
        const type = KINDS[input.kind];
        const runs = await runsOfRecord(ctx.db, store.id, type, input.external_id, 100);
        // A customer's page lists every message sent to them; another record's, those its runs sent.
        const customerId =
          type === "customer"
            ? (await ctx.db.selectFrom("customers").select("id").where("store_id", "=", store.id).where("external_id", "=", input.external_id).where("deleted_at", "is", null).executeTakeFirst())?.id
            : undefined;
        const messages = await listStoreMessages(ctx.db, store.id, 100, type === "customer" ? { customerId: customerId ?? -1 } : { record: { type, externalId: input.external_id } });
        return {
          kind: input.kind,
          external_id: input.external_id,
          record,
          runs: runs.map((run) => ({ ...run, id: Number(run.id), run_at: run.run_at.toISOString(), finished_at: run.finished_at?.toISOString() ?? null, created_at: run.created_at.toISOString() })),
          messages: messages.map((message) =>
            masked({ id: message.id, flow: message.flow, status: message.status, to_phone: message.to_phone, created_at: message.created_at.toISOString(), run_id: Number(message.run_id) }),
          ),
        };
      }),
  }),

  endpoint: router({
    /** The store's own endpoint (null: its messages go to the service's default), never its secret. */
    get: memberProcedure.input(z.object({ store_id: id })).query(async ({ ctx, input }) => {
      await teamStore(ctx, input.store_id);
      return delivery.endpointOf(ctx.db, input.store_id);
    }),
    /** Sets the endpoint's URL; a new endpoint's signing secret is in this answer, and in no later one. */
    set: memberProcedure.input(z.object({ store_id: id, url: z.string().trim().min(1).max(2000) })).mutation(async ({ ctx, input }) => {
      const store = await teamStore(ctx, input.store_id);
      const result = await delivery.setEndpoint(ctx.db, store.id, input.url, ctx.endpoints ?? delivery.DEFAULT_ENDPOINT_SETTINGS);
      await audit(ctx, "endpoint.set", `store ${store.id} (${store.name}): ${new URL(input.url).host}`);
      return result;
    }),
    /** A new signing secret, in this answer only; the one it replaces is still accepted for `overlap_hours`. */
    rollSecret: memberProcedure
      .input(z.object({ store_id: id, overlap_hours: z.number().min(0).max(168).default(delivery.SECRET_OVERLAP_HOURS) }))
      .mutation(async ({ ctx, input }) => {
        const store = await teamStore(ctx, input.store_id);
        const rolled = await delivery.rollEndpointSecret(ctx.db, store.id, input.overlap_hours);
        await audit(ctx, "endpoint.secret_rolled", `store ${store.id} (${store.name}): the previous secret accepted until ${rolled.previous_valid_until}`);
        return rolled;
      }),
    remove: memberProcedure.input(z.object({ store_id: id })).mutation(async ({ ctx, input }) => {
      const store = await teamStore(ctx, input.store_id);
      await delivery.removeEndpoint(ctx.db, store.id);
      await audit(ctx, "endpoint.removed", `store ${store.id} (${store.name})`);
      return { ok: true as const };
    }),
    /** Sends a test event now and answers what the endpoint said. */
    test: memberProcedure.input(z.object({ store_id: id })).mutation(async ({ ctx, input }) => {
      const store = await teamStore(ctx, input.store_id);
      const answer = await delivery.sendTestEvent(ctx.db, store.id, ctx.endpoints ?? delivery.DEFAULT_ENDPOINT_SETTINGS);
      return { url: answer.url, status: answer.status, answer: answer.answer, error: answer.error, duration_ms: answer.durationMs };
    }),
    /** The store's latest deliveries to any endpoint (messages and test events), newest first. */
    deliveries: memberProcedure.input(z.object({ store_id: id, limit: z.number().int().min(1).max(200).default(50) })).query(async ({ ctx, input }) => {
      await teamStore(ctx, input.store_id);
      return (await recentAttempts(ctx.db, input.store_id, input.limit)).map(delivery.toAttempt);
    }),
  }),
};
