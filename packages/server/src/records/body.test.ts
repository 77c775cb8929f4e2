import { customerInputSchema, orderInputSchema } from "@commerce-ingest/shared";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import "../validation.js";
import { parseBody } from "./body.js";

function failure(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a validation failure");
}

describe("parseBody", () => {
  it("names unknown fields at any depth, but not inside free-form metadata", () => {
    const raw = { external_id: "o1", placed_at: "2026-11-22T10:00:00Z", total_price: 1, status: "x", customer: { phone: "+14155552671", nmae: "A" }, metadata: { anything: 1 } };
    expect(parseBody(orderInputSchema, [["customer", "phone"]], raw, "US").ignored).toEqual(["status", "customer.nmae"]);
    const strict = failure(() => parseBody(orderInputSchema, [["customer", "phone"]], raw, "US", { strict: true }));
    expect(strict.details).toEqual([
      { path: "status", message: "unknown field" },
      { path: "customer.nmae", message: "unknown field" },
    ]);
  });

  it("returns the parsed body with its phones in E.164, read in the store's country", () => {
    const body = parseBody(customerInputSchema, [["phone"]], { phone: "(415) 555-2671", first_name: "Ada", unknown: 1 }, "US");
    expect(body).toEqual({ value: { phone: "+14155552671", first_name: "Ada" }, ignored: ["unknown"] });
  });

  it("names every failing field in one 422, phones included", () => {
    const error = failure(() =>
      parseBody(orderInputSchema, [["customer", "phone"]], { external_id: "o1", placed_at: "yesterday", total_price: -1, customer: { phone: "12" } }, "US"),
    );
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.details?.map((detail) => detail.path).sort()).toEqual(["customer.phone", "placed_at", "total_price"]);
  });

  it("refuses a national number when the store has no country, saying why", () => {
    const error = failure(() => parseBody(customerInputSchema, [["phone"]], { phone: "4155552671" }, null));
    expect(error.details).toEqual([{ path: "phone", message: expect.stringContaining("international format") }]);
  });

  it("reports a phone of the wrong type once, from the schema", () => {
    const error = failure(() => parseBody(customerInputSchema, [["phone"]], { phone: 4155552671 }, "US"));
    expect(error.details).toEqual([{ path: "phone", message: "must be a string" }]);
  });
});
