import fs from "node:fs";
import path from "node:path";
import * as tenants from "./tenancy/tenant.service.js";
import { insertAccount, insertMember } from "./accounts/member.repository.js";
import { hashPassword } from "./accounts/password.js";
import { randomToken } from "./tenancy/access.js";
import { inTransaction } from "./db/sql.js";
import type { Db } from "./db/types.js";

export type DemoCredentials = { baseUrl: string; storeId: number; apiKey: string; envFile: string; console: { email: string; password: string } };

export const DEMO_MEMBER_EMAIL = "demo@example.com";

/**
 * On a brand-new database, a demo team, store and key, so a newcomer can push a
 * first record within a minute. Written to DATA_DIR/demo.env for the examples.
 * All or nothing: the file is written before the rows commit, so a crash
 * halfway leaves an empty database that the next start seeds again (the key's
 * value exists nowhere else).
 */
export async function seedDemo(db: Db, dataDir: string, baseUrl: string): Promise<DemoCredentials | undefined> {
  return inTransaction(db, async (trx) => {
    const existing = await trx.selectFrom("teams").select("id").limit(1).executeTakeFirst();
    if (existing) return undefined;
    const team = await tenants.createTeam(trx, "Demo team");
    const store = await tenants.createStore(trx, { team_id: team.id, name: "Demo store", country: "US" });
    const key = await tenants.createApiKey(trx, { team_id: team.id, name: "Demo key" });
    const password = randomToken().slice(0, 16);
    const account = await insertAccount(trx, { email: DEMO_MEMBER_EMAIL, password_hash: await hashPassword(password) });
    await insertMember(trx, { team_id: team.id, account_id: account.id, role: "owner" });
    const envFile = path.join(dataDir, "demo.env");
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(
      envFile,
      `BASE_URL=${baseUrl}\nSTORE_ID=${store.id}\nAPI_KEY=${key.key}\nCONSOLE_EMAIL=${DEMO_MEMBER_EMAIL}\nCONSOLE_PASSWORD=${password}\n`,
      { mode: 0o600 },
    );
    return { baseUrl, storeId: store.id, apiKey: key.key, envFile, console: { email: DEMO_MEMBER_EMAIL, password } };
  });
}

export function demoBanner(demo: DemoCredentials): string {
  const body = JSON.stringify({ external_id: "demo-customer-1", phone: "+12025550143", first_name: "Ada" });
  return [
    "",
    "Demo credentials (shown once; also written to " + demo.envFile + "):",
    `  BASE_URL=${demo.baseUrl}`,
    `  STORE_ID=${demo.storeId}`,
    `  API_KEY=${demo.apiKey}`,
    "",
    "Create a customer (201 the first time, 200 after):",
    `  curl -i -X POST ${demo.baseUrl}/api/v1/stores/${demo.storeId}/customers \\`,
    `    -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\`,
    `    -d '${body}'`,
    "",
    `Web console: ${demo.baseUrl}/sign-in  (e-mail ${demo.console.email}, password ${demo.console.password})`,
    `API reference: ${demo.baseUrl}/docs`,
    "",
  ].join("\n");
}
