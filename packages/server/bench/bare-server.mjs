// The reference the service is measured against: a bare express 5 + pg route that checks the key
// and upserts one order row, with nothing else (no customer, no automations, no validation).
// `node bare-server.mjs <port> <DATABASE_URL>`; it creates its table, and answers 201 or 200.
import { createHash } from "node:crypto";
import express from "express";
import pg from "pg";

const [port, url] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 20 });
await pool.query(`create table if not exists bare_orders (
  store_id bigint not null, external_id text not null, total_price numeric(14,2) not null, body jsonb not null,
  primary key (store_id, external_id))`);

const app = express();
app.use(express.json({ limit: "1mb" }));
app.post("/api/v1/stores/:storeId/orders", async (req, res) => {
  const token = (req.get("authorization") ?? "").replace(/^Bearer /, "");
  const hash = createHash("sha256").update(token).digest("hex");
  const key = await pool.query("select team_id from api_keys where key_hash = $1 and deleted_at is null", [hash]);
  if (key.rowCount === 0) return res.status(401).json({ error: "Invalid API key" });
  const { rows } = await pool.query(
    `insert into bare_orders (store_id, external_id, total_price, body) values ($1, $2, $3, $4)
     on conflict (store_id, external_id) do update set total_price = excluded.total_price, body = excluded.body
     returning (xmax = 0) as inserted`,
    [Number(req.params.storeId), req.body.external_id, req.body.total_price, req.body],
  );
  res.status(rows[0].inserted ? 201 : 200).json({ external_id: req.body.external_id });
});
app.listen(Number(port), "127.0.0.1", () => console.log("ready"));
