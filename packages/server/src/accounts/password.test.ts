import { describe, expect, it } from "vitest";
import { hashPassword, UNKNOWN_MEMBER_HASH, verifyPassword } from "./password.js";

describe("password hashing", () => {
  it("verifies the password it hashed, and no other", async () => {
    const stored = await hashPassword("correct horse battery");
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
  });

  it("salts every hash", async () => {
    expect(await hashPassword("same password")).not.toBe(await hashPassword("same password"));
  });

  it("never matches a malformed hash or the unknown-member hash", async () => {
    expect(await verifyPassword("x", "sha256$abc")).toBe(false);
    expect(await verifyPassword("x", "scrypt$0$8$1$AAAA$AAAA")).toBe(false);
    expect(await verifyPassword("", UNKNOWN_MEMBER_HASH)).toBe(false);
  });

  it("treats canonically equal Unicode passwords alike", async () => {
    const stored = await hashPassword("Ångström-passw0rd");
    expect(await verifyPassword("A\u030Angstro\u0308m-passw0rd", stored)).toBe(true);
  });
});
