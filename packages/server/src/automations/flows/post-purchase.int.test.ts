import { describe, expect, it } from "vitest";
import { jobsFor, messagesFor, newPhone, order, patch, push, settled, withAutomationServer } from "../../../test/automations.js";

withAutomationServer();

describe("post-purchase", () => {
  it("fires once when an order is created, with the order and customer in the message", async () => {
    const phone = newPhone();
    const body = order(phone);
    expect((await push("orders", body)).status).toBe(201);
    await settled();
    const messages = await messagesFor("post_purchase", body.external_id);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      to_phone: phone,
      status: "sent",
      job_status: "succeeded",
      content: { template: "post_purchase", first_name: "Ada", order: { external_id: body.external_id, total_price: "42.50", currency: "EUR" } },
    });
  });

  it("does not fire on an update of the order", async () => {
    const body = order(newPhone());
    await push("orders", body);
    await settled();
    expect((await push("orders", { ...body, total_price: 50 })).status).toBe(200);
    expect((await patch("orders", body.external_id, { financial_status: "refunded" })).status).toBe(200);
    await settled();
    expect(await messagesFor("post_purchase", body.external_id)).toHaveLength(1);
    expect(await jobsFor("post_purchase", body.external_id)).toHaveLength(1);
  });

  it("24 concurrent identical order creates give one post-purchase message", async () => {
    const body = order(newPhone());
    const responses = await Promise.all(Array.from({ length: 24 }, () => push("orders", body)));
    expect(responses.filter((res) => res.status === 201)).toHaveLength(1);
    await settled();
    expect(await messagesFor("post_purchase", body.external_id)).toHaveLength(1);
  });
});
