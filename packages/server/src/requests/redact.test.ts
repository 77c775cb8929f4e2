import { describe, expect, it } from "vitest";
import { redactedJson, redactedPath } from "./request-log.service.js";

describe("redactedJson", () => {
  it("masks phones, e-mails, names, locales and tags by field, phones and e-mails by shape, and keeps the rest as sent", () => {
    const body = {
      external_id: "1001",
      total_price: -1,
      customer: { phone: "(415) 555-2671", email: "ada@example.com", first_name: "Ada", note: "call +1 415 555 2671 or ada@example.com" },
      tags: ["vip", "+442079460958", "bob@example.org"],
      line_items: [{ sku: "SKU-1", quantity: 2 }],
      nothing: null,
    };
    const json = redactedJson(body, 10_000);
    expect(JSON.parse(json)).toEqual({
      external_id: "1001",
      total_price: -1,
      customer: { phone: "(41•••71", email: "a•••@example.com", first_name: "A•••", note: "call +1 •••71 or a•••@example.com" },
      tags: ["v•••", "+•••", "b•••"],
      line_items: [{ sku: "SKU-1", quantity: 2 }],
      nothing: null,
    });
    expect(json).not.toMatch(/555-2671|ada@|2079460958/);
  });

  it("cuts at the cap and says so, without walking the rest", () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({ external_id: `o-${i}`, customer: { phone: "+14155552671" } }));
    const json = redactedJson({ items }, 1_000);
    expect(json.length).toBe(1_001);
    expect(json.endsWith("…")).toBe(true);
    expect(json).not.toContain("4155552671");
  });
});

describe("redactedPath", () => {
  it("masks a segment that is a phone or an e-mail, and leaves other keys alone", () => {
    expect(redactedPath("/api/v1/stores/1/customers/%2B14155552671")).toBe(`/api/v1/stores/1/customers/${encodeURIComponent("+14•••71")}`);
    expect(redactedPath("/api/v1/stores/1/customers/ada%40example.com?x=1")).toBe(`/api/v1/stores/1/customers/${encodeURIComponent("a•••@example.com")}?x=1`);
    expect(redactedPath("/api/v1/stores/1/orders/1001")).toBe("/api/v1/stores/1/orders/1001");
  });
});
