import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { hashToken } from "./tokens.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const API_KEY_LENGTH = 24;
const API_KEY_PATTERN = /^[A-Za-z0-9]{24}$/;

/** 24 characters of [A-Za-z0-9] from the CSPRNG (about 143 bits), without modulo bias. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < API_KEY_LENGTH; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

/** A fast hash is enough: the key is random and long, so there is nothing to brute-force. */
export const hashApiKey = hashToken;

export function looksLikeApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

/** Extracts the token of `Bearer <token>`: the scheme in any case, the token exactly as sent. */
export function bearerToken(header: string): string | undefined {
  const match = /^bearer ([\s\S]+)$/i.exec(header);
  return match?.[1];
}

/** Compares secrets in constant time, whatever their lengths. */
export function secretsEqual(a: string, b: string): boolean {
  const digestA = createHash("sha256").update(a).digest();
  const digestB = createHash("sha256").update(b).digest();
  return timingSafeEqual(digestA, digestB);
}
