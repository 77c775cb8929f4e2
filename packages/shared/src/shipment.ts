import { z } from "zod";
import { externalIdSchema, httpUrlSchema, LIMITS, metadataSchema, sourceUpdatedAtSchema } from "./common.js";

export const SHIPMENT_STATUSES = ["pending", "in_transit", "delivered", "failed", "returned"] as const;
export const shipmentStatusSchema = z.enum(SHIPMENT_STATUSES);

export const shipmentInputSchema = z.object({
  external_id: externalIdSchema,
  order_external_id: externalIdSchema,
  tracking_number: z.string().max(LIMITS.name).nullish(),
  tracking_url: httpUrlSchema.nullish(),
  carrier: z.string().max(LIMITS.name).nullish(),
  status: shipmentStatusSchema.nullish(),
  metadata: metadataSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const shipmentSchema = z
  .object({
    external_id: z.string(),
    store_id: z.number().int(),
    order_id: z.number().int().meta({ description: "The service's internal id of the linked order" }),
    tracking_number: z.string().nullable(),
    tracking_url: z.string().nullable(),
    carrier: z.string().nullable(),
    status: shipmentStatusSchema.nullable(),
  })
  .meta({ id: "Shipment" });

/** A shipment as stored, read back: with the external_id of its order. */
export const shipmentRecordSchema = shipmentSchema
  .extend({
    order_external_id: z.string(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    source_updated_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "ShipmentRecord" });

export type ShipmentRecord = z.infer<typeof shipmentRecordSchema>;
export type ShipmentStatus = z.infer<typeof shipmentStatusSchema>;
export type ShipmentInput = z.input<typeof shipmentInputSchema>;
export type Shipment = z.infer<typeof shipmentSchema>;
