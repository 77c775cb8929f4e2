import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export const adminTokenFile = (dataDir: string) => path.join(dataDir, "admin-token");

/**
 * The operator API's token: ADMIN_TOKEN when set, otherwise one kept in
 * DATA_DIR (created on first use, readable by the owner only) where the admin
 * command line finds it.
 */
export function resolveAdminToken(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = adminTokenFile(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, randomBytes(24).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Error && "code" in error && error.code === "EEXIST")) throw error;
  }
  return fs.readFileSync(file, "utf8").trim();
}
