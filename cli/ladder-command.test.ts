import { describe, expect, it } from "vitest";
import { planLadder } from "./ladder-command.ts";

const TARGET = "http://127.0.0.1:9090";

describe("planLadder", () => {
  it("a custom target at rates: constant-arrival-rate steps with the given thresholds", async () => {
    const { steps, rules, coolDownMs } = await planLadder([
      "--target",
      `${TARGET}/delay?ms=2`,
      "--rates",
      "50,100",
      "--duration",
      "5s",
      "--threshold",
      "http_req_duration=p(95)<100",
      "--error-limit",
      "0.5%",
      "--cool-down",
      "2s",
    ]);
    expect(steps.map((s) => [s.label, s.ratePerS])).toEqual([
      ["50/s", 50],
      ["100/s", 100],
    ]);
    expect(steps[1]!.spec).toMatchObject({
      executor: "constant-arrival-rate",
      rate: 100,
      duration: "5s",
      steps: [{ path: "/delay?ms=2" }],
      thresholds: { http_req_duration: ["p(95)<100"] },
    });
    expect([rules.errorLimit, coolDownMs]).toEqual([0.005, 2000]);
  });

  it("a scenario at presets: each step is the preset (thresholds and all), shortened", async () => {
    const { steps } = await planLadder([
      "--scenario",
      "userinfo",
      "--presets",
      "rps100,rps500",
      "--seed",
      "tokens",
      "--duration-scale",
      "0.1",
      "--target",
      TARGET,
      "--client-id",
      "c",
      "--client-secret",
      "s",
    ]);
    expect(steps.map((s) => [s.label, s.ratePerS])).toEqual([
      ["rps100", 100],
      ["rps500", 500],
    ]);
    expect(steps[1]!.spec).toMatchObject({ preset: "rps500", durationScale: 0.1, scenario: { name: "userinfo", seed: "tokens" } });
  });

  it("a scenario at rates: the scenario's preset thresholds unless --threshold is given", async () => {
    const { steps } = await planLadder(["--scenario", "userinfo", "--rates", "10,20", "--duration", "3s", "--seed", "tokens", "--target", TARGET]);
    expect(steps[0]!.spec).toMatchObject({ executor: "constant-arrival-rate", rate: 10, thresholds: { http_req_duration: ["p(95)<200", "p(99)<300"] } });
  });

  it.each([
    // [flags, what the message says]
    [["--target", TARGET, "--rates", "100,50", "--duration", "1s"], /must rise/],
    [["--target", TARGET, "--rates", "50,x", "--duration", "1s"], /positive numbers/],
    [["--target", TARGET, "--rates", "50"], /--duration/],
    [["--target", TARGET, "--presets", "rps100"], /--presets need --scenario/],
    [["--scenario", "userinfo", "--presets", "rps500,rps100", "--target", TARGET], /must rise/],
    [["--scenario", "userinfo", "--presets", "rps7", "--target", TARGET], /unknown preset "rps7"/],
    [["--scenario", "nope", "--presets", "rps100", "--target", TARGET], /unknown scenario/],
    [["--target", TARGET, "--rates", "50", "--duration", "1s", "--error-limit", "150%"], /--error-limit/],
    [["--target", TARGET, "--rates", "50", "--duration", "1s", "--cool-down", "soon"], /--cool-down/],
    [["--target", TARGET, "--rates", "50", "--duration", "forever"], /invalid ladder:\n {2}- 50\/s: duration/],
  ])("refuses %j with exit code 104", async (args, message) => {
    await expect(planLadder(args)).rejects.toMatchObject({ code: 104, message: expect.stringMatching(message) });
  });
});
