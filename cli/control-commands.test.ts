import { describe, expect, it } from "vitest";
import { CliError } from "./connection.ts";
import { controlLine, pauseCommand, scaleCommand, vusOf } from "./control-commands.ts";

describe("edgeload scale, pause, resume", () => {
  it.each([
    ["3", 3],
    ["0", 0], // scaling to 0 is a level, not "unset"
    [" 12 ", 12],
  ])("reads --vus %j as %d", (given, vus) => {
    expect(vusOf(given)).toBe(vus);
  });

  it.each([
    // [--vus, message]
    [undefined, /--vus is required/],
    ["-1", /--vus: "-1" must be a whole number of VUs, 0 or more/],
    ["2.5", /whole number/],
    ["many", /whole number/],
    ["", /whole number/],
  ])("refuses --vus %j with exit 104, naming why", (given, message) => {
    const error = (() => {
      try {
        vusOf(given);
      } catch (e) {
        return e as CliError;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(CliError);
    expect(error!.code).toBe(104);
    expect(error!.message).toMatch(message);
  });

  it("refuses a missing run id or --vus before calling any API (exit 104)", async () => {
    await expect(scaleCommand(["--vus", "3", "--url", "http://127.0.0.1:1", "--token", "t"])).rejects.toMatchObject({
      code: 104,
      message: /a run id is required/,
    });
    await expect(scaleCommand(["r-x", "--url", "http://127.0.0.1:1", "--token", "t"])).rejects.toMatchObject({ code: 104, message: /--vus is required/ });
    await expect(pauseCommand(["r-a", "r-b"])).rejects.toMatchObject({ code: 104, message: /one run id is required/ });
  });

  it("says the level the run now has, and the shards not reached yet", () => {
    const base = { id: "r-1", vus: 3, paused: false, maxVUs: 4, shardsTold: 2, shards: 2 };
    expect(controlLine(base)).toBe("run r-1: 3 VUs active, at most 4");
    expect(controlLine({ ...base, paused: true })).toBe("run r-1: paused (3 VUs when resumed), at most 4");
    expect(controlLine({ ...base, shardsTold: 1 })).toBe("run r-1: 3 VUs active, at most 4; 1 of 2 shards not reached yet (told again within seconds)");
  });
});
