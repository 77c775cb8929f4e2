import { describe, expect, it } from "vitest";
import type { JobRow, Trx } from "../../db/types.js";
import { checkoutRecovery } from "./checkout-recovery.js";
import { FLOW_DEFINITIONS } from "./index.js";

describe("flow definitions", () => {
  it("one per flow, each named after its key", () => {
    for (const [flow, definition] of Object.entries(FLOW_DEFINITIONS)) expect(definition.flow).toBe(flow);
  });

  it("a payload that no longer matches its schema fails the job loudly instead of being read as something else", async () => {
    const job = { id: 1, flow: "checkout_recovery", record_id: 2, payload: { abandonment_number: 2 } } as unknown as JobRow;
    // The payload is checked before the handler touches the database.
    await expect(checkoutRecovery.decide({} as Trx, job, new Set())).rejects.toThrow(/abandonment/);
  });
});
