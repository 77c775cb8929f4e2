import { describe, expect, it } from "vitest";
import { bearerToken, generateApiKey, hashApiKey, looksLikeApiKey, secretsEqual } from "./access.js";

describe("API keys", () => {
  it("are 24 characters of [A-Za-z0-9], different every time", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey()));
    expect(keys.size).toBe(1000);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9]{24}$/);
  });

  it("use every character of the alphabet", () => {
    const seen = new Set(Array.from({ length: 500 }, () => generateApiKey()).join(""));
    expect(seen.size).toBe(62);
  });

  it("hash to a stable hex digest that is not the key", () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toContain(key);
  });

  it("reads the bearer scheme in any case and the token exactly", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bEaReR abc")).toBe("abc");
    expect(bearerToken("Bearer  abc")).toBe(" abc");
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(looksLikeApiKey(" abcdefghijklmnopqrstuvw")).toBe(false);
  });

  it("compares secrets of any length", () => {
    expect(secretsEqual("a", "a")).toBe(true);
    expect(secretsEqual("a", "ab")).toBe(false);
  });
});
