import { operator, startProcess, stopAll, tempDir, type Proc } from "../../server/test/processes.js";

/** How long a test that starts its own service may take: it scales with `PROCESS_START_TIMEOUT_MS`, as the process tests do. */
export { PROCESS_TEST_TIMEOUT_MS as SERVICE_TEST_TIMEOUT_MS } from "../../server/test/processes.js";

export const ADMIN = "sdk-test-admin-token-0123456789";

/** The built service as its own process on the embedded database, with a fresh team, store and key. */
export async function startService(env: Record<string, string> = {}) {
  const procs: Proc[] = [];
  const proc = await startProcess("main.js", { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", ...env });
  procs.push(proc);
  const url = proc.url ?? "";
  const tenant = async (storeFields: Record<string, unknown> = {}) => {
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "SDK" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US", ...storeFields });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "sdk" });
    return { teamId: team.id, storeId: store.id, apiKey: key.key };
  };
  return { url, tenant, output: proc.output, stop: () => stopAll(procs) };
}
