import { z } from "zod";
import {
  externalIdSchema,
  httpUrlSchema,
  KEEP_OR_CLEAR,
  LIMITS,
  metadataInputSchema,
  metadataOutputSchema,
  sourceUpdatedAtOutputSchema,
  sourceUpdatedAtSchema,
  storedTime,
} from "./common.js";

export const SHIPMENT_STATUSES = ["pending", "in_transit", "delivered", "failed", "returned"] as const;
export const shipmentStatusSchema = z.enum(SHIPMENT_STATUSES);

export const shipmentInputSchema = z.object({
  external_id: externalIdSchema.meta({
    description: "Your shop's id for the shipment, 1-255 characters: the upsert key within the store.",
    example: "shp-1001-1",
  }),
  order_external_id: externalIdSchema.meta({
    description:
      "The `external_id` of the order of this store the shipment belongs to, 1-255 characters (422 `Order not found` when there is none). " +
      "Re-posting with another order re-links the shipment.",
    example: "1001",
  }),
  tracking_number: z
    .string()
    .max(LIMITS.name)
    .nullish()
    .meta({ description: `The carrier's tracking number, at most 255 characters. ${KEEP_OR_CLEAR}`, example: "1Z999AA10123456784" }),
  tracking_url: httpUrlSchema.nullish().meta({
    description: `Where the customer tracks the parcel: an http(s) URL of at most 1,024 characters. ${KEEP_OR_CLEAR}`,
    example: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
  }),
  carrier: z
    .string()
    .max(LIMITS.name)
    .nullish()
    .meta({ description: `The carrier's name, at most 255 characters. ${KEEP_OR_CLEAR}`, example: "UPS" }),
  status: shipmentStatusSchema.nullish().meta({
    description:
      "One of `pending`, `in_transit`, `delivered`, `failed`, `returned`. A new status notifies the customer once per (shipment, status). " +
      KEEP_OR_CLEAR,
    example: "in_transit",
  }),
  metadata: metadataInputSchema,
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const shipmentSchema = z
  .object({
    external_id: z.string().meta({ description: "Your shop's id for the shipment.", example: "shp-1001-1" }),
    store_id: z.number().int().meta({ description: "The id of the store the shipment belongs to.", example: 1 }),
    order_id: z
      .number()
      .int()
      .meta({ description: "The service's internal id of the linked order (read the shipment back for its `order_external_id`).", example: 42 }),
    tracking_number: z.string().nullable().meta({
      description: "The carrier's tracking number; `null` when never sent or cleared.",
      example: "1Z999AA10123456784",
    }),
    tracking_url: z.string().nullable().meta({
      description: "Where the customer tracks the parcel; `null` when never sent or cleared.",
      example: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
    }),
    carrier: z.string().nullable().meta({ description: "The carrier's name; `null` when never sent or cleared.", example: "UPS" }),
    status: shipmentStatusSchema.nullable().meta({
      description: "One of `pending`, `in_transit`, `delivered`, `failed`, `returned`; `null` when never sent or cleared.",
      example: "in_transit",
    }),
  })
  .meta({ id: "Shipment" });

/** A shipment as stored, read back: with the external_id of its order. */
export const shipmentRecordSchema = shipmentSchema
  .extend({
    order_external_id: z.string().meta({ description: "The `external_id` of the linked order.", example: "1001" }),
    metadata: metadataOutputSchema,
    source_updated_at: sourceUpdatedAtOutputSchema,
    created_at: storedTime("When the service first stored the shipment"),
    updated_at: storedTime("When the service last changed the shipment"),
  })
  .meta({ id: "ShipmentRecord" });

export type ShipmentRecord = z.infer<typeof shipmentRecordSchema>;
export type ShipmentStatus = z.infer<typeof shipmentStatusSchema>;
export type ShipmentInput = z.input<typeof shipmentInputSchema>;
export type Shipment = z.infer<typeof shipmentSchema>;
