import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { isPrivateAddress, postSigned, PRIVATE_ADDRESS_REFUSED } from "./providers.js";

describe("a store endpoint's address", () => {
  it("is private when loopback, private, link-local, shared or unspecified, in IPv4, IPv6 and IPv4 mapped into IPv6", () => {
    for (const address of ["127.0.0.1", "10.0.0.8", "172.20.1.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"]) {
      expect([address, isPrivateAddress(address)]).toEqual([address, true]);
    }
    for (const address of ["8.8.8.8", "172.32.0.1", "93.184.216.34", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
    }
  });

  it("is checked at each delivery, on the addresses a name resolves to: nothing reaches a private one unless allowed", async () => {
    let reached = 0;
    const receiver = http.createServer((_req, res) => {
      reached++;
      res.end("ok");
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const post = (url: string, allowPrivate: boolean) => postSigned({ url, secrets: () => ["s".repeat(16)], timeoutMs: 2000, allowPrivate }, "{}", {});
      expect(await post(`http://127.0.0.1:${port}/x`, false)).toMatchObject({ status: null, error: PRIVATE_ADDRESS_REFUSED });
      // A name (checked when resolved, as a name that later resolves elsewhere would be).
      expect(await post(`http://localhost:${port}/x`, false)).toMatchObject({ status: null, error: PRIVATE_ADDRESS_REFUSED });
      expect(reached).toBe(0);
      expect(await post(`http://localhost:${port}/x`, true)).toMatchObject({ status: 200, answer: "ok", error: null });
      expect(reached).toBe(1);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
