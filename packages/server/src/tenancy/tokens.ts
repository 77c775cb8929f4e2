import { createHash, randomBytes } from "node:crypto";

/** 256 random bits, URL-safe: session cookies and invitation links. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What the database keeps of a token or key: its SHA-256 (the token is random and long, so a fast hash is enough). */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
