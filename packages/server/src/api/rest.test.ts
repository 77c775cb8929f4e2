import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Context } from "../context.js";
import { AppError } from "../errors.js";
import { appRouter } from "../router.js";
import { baseProcedure, rest, router } from "../trpc.js";
import { buildOpenApiDocument } from "./openapi.js";
import { bodyBudget, createRestRouter, listRestRoutes } from "./rest.js";

/**
 * What the REST adapter takes from tRPC and trpc-to-openapi, on a router of
 * its own: the routes as the generated document lists them (each operation's
 * id its procedure's path), procedures called through tRPC's server-side
 * caller with the request's context and input, and a procedure's error
 * reaching the adapter with its cause. An upgrade of either library that
 * changes one of these fails here, not in production.
 */
const probe = router({
  things: router({
    make: baseProcedure
      .meta(rest({ method: "POST", path: "/probe/things/{thing_id}" }, { success: { 201: "Made" }, errors: ["VALIDATION_FAILED"] }))
      .input(z.object({ thing_id: z.coerce.number().int(), name: z.string() }))
      .output(z.object({ id: z.number(), name: z.string(), requestId: z.string() }))
      .mutation(({ ctx, input }) => {
        ctx.response.status = 201;
        return { id: input.thing_id, name: input.name, requestId: ctx.requestId };
      }),
    refuse: baseProcedure
      .meta(rest({ method: "GET", path: "/probe/refusal" }, { success: { 200: "Never" }, errors: ["ORDER_NOT_FOUND"] }))
      .input(z.object({}))
      .output(z.object({}))
      .query(() => {
        throw new AppError("ORDER_NOT_FOUND");
      }),
  }),
});

let url: string;
let close: () => void;

beforeAll(async () => {
  const app = express();
  app.use(express.raw({ type: () => true }));
  app.use(
    createRestRouter({
      appRouter: probe,
      // The adapter's part of a context: what the procedure reads and sets.
      createContext: (_req, _res, body) => ({ requestId: "req-1", rawBody: body.value, response: { status: 200 } }) as unknown as Context,
      onUnexpectedError: (error) => {
        throw error;
      },
      deadlineMs: 10_000,
      bodies: bodyBudget(1024 * 1024),
    }),
  );
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close?.());

describe("the REST adapter over tRPC", () => {
  it("lists each declared route with its procedure's path and contract, from the generated document", () => {
    expect(listRestRoutes(probe)).toEqual([
      { method: "POST", path: "/probe/things/{thing_id}", procedurePath: "things.make", contract: { success: { 201: "Made" }, errors: ["VALIDATION_FAILED"] } },
      { method: "GET", path: "/probe/refusal", procedurePath: "things.refuse", contract: { success: { 200: "Never" }, errors: ["ORDER_NOT_FOUND"] } },
    ]);
  });

  it("calls a procedure with the path's parameters and the body as its input, and answers the status it chose", async () => {
    const res = await fetch(`${url}/probe/things/7`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "lamp" }) });
    expect([res.status, await res.json()]).toEqual([201, { id: 7, name: "lamp", requestId: "req-1" }]);
  });

  it("answers a procedure's error by the error table, and another method with 405", async () => {
    const refused = await fetch(`${url}/probe/refusal`);
    expect([refused.status, await refused.json()]).toEqual([404, { error: "Order not found", code: "order_not_found" }]);
    const wrong = await fetch(`${url}/probe/things/7`, { method: "DELETE" });
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "POST"]);
  });

  it("finds every operation of the service's API, each with its contract", () => {
    const routes = listRestRoutes(appRouter).filter((route) => route.path.startsWith("/api/v1/"));
    const documented = Object.entries(buildOpenApiDocument(appRouter).paths ?? {}).flatMap(([path, operations]) => Object.keys(operations ?? {}).map((method) => `${method.toUpperCase()} ${path}`));
    expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual(documented.sort());
    expect(routes.length).toBe(24);
    expect(routes.filter((route) => !route.contract).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(routes.find((route) => route.method === "POST" && route.path === "/api/v1/stores/{store_id}/orders")?.procedurePath).toBe("orders.upsert");
  });
});
