import { describe, expect, it } from "vitest";
import { targetOfBaseUrl } from "./script-command.ts";

describe("targetOfBaseUrl", () => {
  it.each([
    // An http(s) base is the target as it is.
    ["http://127.0.0.1:9090", "http://127.0.0.1:9090"],
    ["https://api.example.com/v1", "https://api.example.com/v1"],
    // A WebSocket base names the same origin: it was taken as the target and refused (104).
    ["ws://127.0.0.1:9090/ws", "http://127.0.0.1:9090/ws"],
    ["wss://echo.example.com", "https://echo.example.com/"],
    // Nothing usable: the CLI asks for --target.
    [undefined, null],
    ["not a url", null],
    ["ftp://files.example.com", null],
  ])("%s → %s", (base, target) => {
    expect(targetOfBaseUrl(base)).toBe(target);
  });
});
