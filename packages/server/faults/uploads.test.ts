import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operator, startProcess, stopAll, type Proc } from "../test/processes.js";
import { blankLines, longLines, MiB, peakMemoryOf, streamUpload, uploadMemoryBound, type Shop } from "../test/uploads.js";
import { createCluster, faultTestsUnavailable, freePort, type Cluster } from "./cluster.js";

/**
 * Hostile uploads while another team pushes, against one server with its
 * default settings (but a request timeout of 2 s, and room for twelve uploads at once): no push is refused with a
 * 5xx, the process never restarts, and its memory stays within the bound of
 * docs/operations.md.
 */
const ADMIN = "faults-uploads-admin-token-0123456789";
const unavailable = faultTestsUnavailable(Boolean(process.env.CI));
/** Room for every hostile upload at once, so that each is read for real. */
const UPLOADS = 12;
const BOUND = uploadMemoryBound({ uploadsAtOnce: UPLOADS, chunkBytes: MiB, lineBytes: MiB, merging: 2 });

describe.runIf(!unavailable)("hostile uploads beside live pushes", () => {
  let cluster: Cluster;
  let server: Proc;

  beforeAll(async () => {
    cluster = await createCluster(await freePort());
    server = await startProcess("main.js", { DATABASE_URL: cluster.url, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", PORT: String(await freePort()), REQUEST_TIMEOUT_MS: "2000", IMPORT_UPLOADS_AT_ONCE: String(UPLOADS) });
  });
  afterAll(async () => {
    await stopAll([server]);
    await cluster?.destroy();
  });

  async function shopOn(url: string, name: string): Promise<Shop> {
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name });
    return { url, storeId: store.id, key: key.key };
  }

  /** An upload that sends its first lines, then a byte a second: answered 408 by the server. */
  function trickle(shop: Shop) {
    return new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(shop.url).port), "127.0.0.1");
      let answer = "";
      const timer = setInterval(() => socket.writable && socket.write(" "), 1000);
      socket.on("data", (data: Buffer) => (answer += data.toString()));
      socket.on("error", () => undefined);
      socket.on("close", () => {
        clearInterval(timer);
        resolve(answer.split("\r\n")[0] ?? "");
      });
      const lines = [...longLines(1200, 200)()].join("");
      socket.write(
        `POST /api/v1/stores/${shop.storeId}/imports?kind=orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${shop.key}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000000\r\n\r\n${lines}`,
      );
    });
  }

  it("keeps answering pushes, never restarts, and stays within its memory bound", { timeout: 240_000 }, async () => {
    const url = server.url ?? "";
    const [pusher, hostile] = [await shopOn(url, "Pushes"), await shopOn(url, "Hostile")];
    const started = peakMemoryOf(server.child.pid);

    let attacking = true;
    const statuses: number[] = [];
    const pushes = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; attacking; i++) {
        const res = await fetch(`${url}/api/v1/stores/${pusher.storeId}/orders`, {
          method: "POST",
          headers: { Authorization: `Bearer ${pusher.key}`, "Content-Type": "application/json" },
          body: JSON.stringify({ external_id: `o-${lane}-${i}`, placed_at: "2026-11-01T10:00:00Z", total_price: 10, customer: { external_id: `c-${lane}`, phone: `+1415555${1000 + lane}` } }),
        }).catch(() => undefined);
        statuses.push(res?.status ?? 0);
        await res?.arrayBuffer();
      }
    });

    const attacks = await Promise.all([
      streamUpload(hostile, "orders", blankLines(300), { gzip: true }),
      streamUpload(hostile, "orders", blankLines(200)),
      streamUpload(hostile, "orders", longLines(1100, 1_000_000), { gzip: true }),
      ...Array.from({ length: 6 }, () => streamUpload(hostile, "orders", longLines(40, MiB - 64), { gzip: true })),
      // Labelled gzip and not; gzip (its first bytes) sent unlabelled.
      streamUpload(hostile, "orders", () => [Buffer.from("not gzip at all\n")]).then(() => streamUpload(hostile, "orders", () => [Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3])])),
      trickle(hostile),
    ]);
    attacking = false;
    await Promise.all(pushes);

    const grown = peakMemoryOf(server.child.pid) - started;
    const count = (test: (status: number) => boolean) => statuses.filter(test).length;
    console.log(`Hostile uploads run: ${JSON.stringify({ pushes: statuses.length, "2xx": count((s) => s < 300), "429": count((s) => s === 429), "5xx": count((s) => s >= 500), unanswered: count((s) => s === 0), uploads: attacks.map((attack) => (typeof attack === "object" ? attack.status : attack.slice(9, 12))), grownMiB: Math.round(grown / MiB), boundMiB: Math.round(BOUND / MiB) })}`);
    // Every hostile upload was answered as it deserved.
    expect(attacks.map((attack) => (typeof attack === "object" ? attack.status : attack))).toEqual([202, 202, 413, 202, 202, 202, 202, 202, 202, 422, "HTTP/1.1 408 Request Timeout"]);

    // No push was refused with a 5xx or left unanswered.
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status >= 500 || status === 0)).toEqual([]);
    // The same process, still serving, within its bound.
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(grown).toBeLessThan(BOUND);
  });
});
