import { describe, expect, it } from "vitest";
import { checkTarget, isListed, listEntry } from "./target-policy.ts";

describe("isListed: an entry allows its scheme, host and port, nothing wider", () => {
  it.each([
    // [url, list, listed, why]
    ["https://api.example.com/x", "api.example.com", true, "a bare host is https on 443"],
    ["http://api.example.com/x", "api.example.com", false, "a bare host does not allow plain http"],
    ["https://api.example.com:8443/x", "api.example.com", false, "nor another port"],
    ["https://api.example.com:8443/x", "api.example.com:8443", true, "a port written in the entry"],
    ["https://api.example.com:443/x", "https://api.example.com", true, "the default port written or not"],
    ["http://api.example.com:8080/", "http://api.example.com:8080", true, "an origin with its port"],
    ["http://api.example.com:8081/", "http://api.example.com:8080", false, "another port of an origin"],
    ["https://a.example.com/", "*.example.com", true, "a wildcard: https on 443"],
    ["http://a.example.com/", "*.example.com", false, "a wildcard does not allow http"],
    ["https://example.com/", "*.example.com", false, "a wildcard is subdomains only"],
    ["https://a.evilexample.com/", "*.example.com", false, "a suffix is not a subdomain"],
    ["http://a.example.com:8080/", "http://*.example.com:8080", true, "a wildcard with a scheme and a port"],
    ["wss://api.example.com/ws", "api.example.com", true, "wss goes with https"],
    ["ws://api.example.com/ws", "api.example.com", false, "ws goes with http"],
    ["https://API.Example.com/", "api.example.com", true, "hosts compare without case"],
    ["https://api.example.com/", "https://api.example.com/path", false, "an entry with a path is no entry"],
  ])("%s against %s → %s (%s)", (url, list, listed, _why) => {
    expect(isListed(new URL(url), list)).toBe(listed);
  });

  it("reads entries' scheme, host and port", () => {
    expect(listEntry("api.example.com")).toEqual({ scheme: "https", host: "api.example.com", port: "443" });
    expect(listEntry("*.example.net:8443")).toEqual({ scheme: "https", host: "*.example.net", port: "8443" });
    expect(listEntry("http://10.0.0.1:8080")).toEqual({ scheme: "http", host: "10.0.0.1", port: "8080" });
    expect(listEntry("not a host")).toBeNull();
  });

  it("a deployed target outside the list is refused naming the list and how to add to it", () => {
    expect(checkTarget("http://api.example.com", "api.example.com", "deployed")?.detail).toMatch(
      /http:\/\/api\.example\.com is not in ALLOWED_TARGETS.*a bare host means https on 443/,
    );
    expect(checkTarget("https://api.example.com", "api.example.com", "deployed")).toBeNull();
  });
});
