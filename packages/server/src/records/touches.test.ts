import { describe, expect, it } from "vitest";
import { checkoutWrite } from "./checkouts/checkout.service.js";
import { customerWrite } from "./customers/customer.service.js";
import { orderWrite } from "./orders/order.service.js";
import { shipmentWrite } from "./shipments/shipment.service.js";
import type { z } from "zod";
import { parseItem, type UpsertSpec } from "./write-path.js";

/** The rows a body's write may touch, as an import's runner reads them from a checked line. */
function touches(spec: UpsertSpec<z.ZodType, object>, body: unknown): readonly string[] {
  const item = parseItem(spec, body, "US", false);
  if (item.refused) throw new Error(JSON.stringify(item.refused));
  return spec.touches(item.value);
}

describe("the rows a write may touch", () => {
  it("name an order, its customer by the key rule, and its phone as stored (E.164)", () => {
    expect(touches(orderWrite, { ...orderWrite.example, customer: { external_id: "c-9", phone: "(415) 555-2671" } })).toEqual(["orders:1001", "customers:c-9", "phones:+14155552671"]);
    // A customer without an external_id is keyed by its phone.
    expect(touches(orderWrite, { ...orderWrite.example, customer: { phone: "+14155552671" } })).toEqual(["orders:1001", "customers:+14155552671", "phones:+14155552671"]);
  });

  it("name a checkout and its customer, a customer and its phone, a shipment and its order", () => {
    expect(touches(checkoutWrite, checkoutWrite.example)).toEqual(["checkouts:chk-5521", "customers:c-1001", "phones:+14155552671"]);
    expect(touches(customerWrite, customerWrite.example)).toEqual(["customers:c-1001", "phones:+14155552671"]);
    expect(touches(shipmentWrite, shipmentWrite.example)).toEqual(["shipments:shp-1001-1", "orders:1001"]);
  });

  it("meet for two customers of one phone, and for an order and the customer it embeds", () => {
    const a = touches(customerWrite, { external_id: "a", phone: "+14155552671" });
    const b = touches(customerWrite, { external_id: "b", phone: "4155552671" });
    expect(a.filter((name) => b.includes(name))).toEqual(["phones:+14155552671"]);
    const order = touches(orderWrite, { ...orderWrite.example, customer: { external_id: "a", phone: "+12025550143" } });
    expect(order.filter((name) => a.includes(name))).toEqual(["customers:a"]);
  });
});
