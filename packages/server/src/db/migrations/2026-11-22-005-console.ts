import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The people of a shop's team who sign in to the console. An e-mail belongs to one team.
  await db.schema
    .createTable("members")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("team_id", "bigint", (col) => col.notNull().references("teams.id"))
    .addColumn("email", "text", (col) => col.notNull())
    .addColumn("password_hash", "text", (col) => col.notNull())
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index members_email_key on members (lower(email))`.execute(db);
  await db.schema.createIndex("members_team_id_idx").on("members").column("team_id").execute();

  // One-time links that let a person choose a password and join a team. Only a hash of the token is kept.
  await db.schema
    .createTable("invitations")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("team_id", "bigint", (col) => col.notNull().references("teams.id"))
    .addColumn("email", "text", (col) => col.notNull())
    .addColumn("token_hash", "text", (col) => col.notNull().unique())
    .addColumn("invited_by", "bigint", (col) => col.references("members.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (col) => col.notNull())
    .addColumn("accepted_at", "timestamptz")
    .execute();

  // Console sessions: the cookie carries a random token, the row its hash.
  await db.schema
    .createTable("sessions")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("member_id", "bigint", (col) => col.notNull().references("members.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (col) => col.notNull().unique())
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("last_seen_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (col) => col.notNull())
    .execute();
  await db.schema.createIndex("sessions_member_id_idx").on("sessions").column("member_id").execute();

  await db.schema
    .alterTable("api_keys")
    .addColumn("created_by", "bigint", (col) => col.references("members.id").onDelete("set null"))
    .addColumn("last_used_at", "timestamptz")
    .execute();

  // Recent API calls per store, for finding why a push was refused: never bodies, phones or key values.
  await db.schema
    .createTable("request_log")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("key_id", "bigint", (col) => col.references("api_keys.id"))
    .addColumn("created_at", "timestamptz", (col) => col.notNull())
    .addColumn("method", "text", (col) => col.notNull())
    .addColumn("route", "text", (col) => col.notNull())
    .addColumn("status", "integer", (col) => col.notNull())
    .addColumn("error", "text")
    .addColumn("request_id", "text", (col) => col.notNull())
    .addColumn("latency_ms", "real", (col) => col.notNull())
    .execute();
  await db.schema.createIndex("request_log_store_idx").on("request_log").columns(["store_id", "created_at"]).execute();
  await db.schema.createIndex("request_log_created_idx").on("request_log").column("created_at").execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("request_log").execute();
  await db.schema.alterTable("api_keys").dropColumn("created_by").dropColumn("last_used_at").execute();
  await db.schema.dropTable("sessions").execute();
  await db.schema.dropTable("invitations").execute();
  await db.schema.dropTable("members").execute();
}
