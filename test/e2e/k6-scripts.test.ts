/**
 * The k6 scripts (k6-scripts/) against the local stack's Authrim-style target: `k6 inspect`
 * accepts each one and expands presets exactly as core/spec/presets.ts does (one presets file,
 * two readers), and a short k6 run of every scenario — seeded by the real seeders, the seed
 * read from edgeload's signed TOKEN_URL or a local TOKEN_PATH, in object and bare-array
 * form — passes its checks and its preset's thresholds, reporting the edge scenarios'
 * metric names. Load goes only to the loopback target, a few seconds at a low rate.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseDurationMs } from "../../core/spec/duration.ts";
import { expandPreset, presetNames } from "../../core/spec/presets.ts";
import { SCENARIOS as EDGE_SCENARIOS } from "../../scenarios/catalog.ts";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { seedAccessTokens } from "../../seeds/access-tokens.ts";
import { seedRefreshTokens } from "../../seeds/refresh-tokens.ts";
import { seedSessions } from "../../seeds/sessions.ts";
import { seedUsers } from "../../seeds/users.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";
import { runCli } from "./cli-process.ts";

const SCENARIOS = ["userinfo", "introspect", "token-exchange", "refresh", "silent-auth", "otp-login"] as const;
/** k6's own metrics; everything else in a summary is the scenario's. */
const BUILT_IN = /^(http_req|iteration|data_|vus|checks$|dropped_iterations$)/;
type Metrics = Record<string, { type: string; values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }>;

describeWithK6("k6 scripts", (k6) => {
  const fixture = useLocalStack("edgeload-k6-scripts-");
  const script = (name: string) => join(PROJECT_ROOT, "k6-scripts", `${name}.js`);
  let dir: string;
  /** What every scenario script is given: the target and the load-test client. */
  let base: Record<string, string>;
  const seedEnv: Record<string, Record<string, string>> = {};
  /** Seeds the edgeload runs use instead of the k6 runs' (those a run uses up). */
  const edgeSeedEnv: Record<string, Record<string, string>> = {};

  /** `k6 <args> <script>` with only `vars` as the script's environment (-e), never this shell's. */
  const k6Run = async (args: string[], vars: Record<string, string>) => {
    const flags = Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    try {
      const { stdout, stderr } = await promisify(execFile)(k6, [...args.slice(0, -1), ...flags, args.at(-1)!], {
        maxBuffer: 16 << 20,
        env: { ...process.env, K6_NO_USAGE_REPORT: "true" },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
    }
  };

  beforeAll(async () => {
    const { stack, client } = fixture;
    dir = await mkdtemp(join(tmpdir(), "edgeload-k6-scripts-"));
    base = {
      BASE_URL: stack.targetUrl,
      CLIENT_ID: stack.targetClient.clientId,
      CLIENT_SECRET: stack.targetClient.clientSecret,
      ADMIN_SECRET: stack.targetAdminSecret,
      REDIRECT_URI: stack.targetClient.redirectUri,
    };
    const access = { baseUrl: stack.targetUrl, adminSecret: stack.targetAdminSecret, ...stack.targetClient };
    const [tokens, families, edgeFamilies, sessions, users] = await Promise.all([
      seedAccessTokens({ ...access, count: 120, users: 10 }),
      seedRefreshTokens({ ...access, count: 100, setName: "k6-refresh" }),
      // A rotated family cannot be rotated from its old token again: the edgeload run of the
      // refresh script gets families of its own, on users of its own (one family per user and client).
      seedRefreshTokens({ ...access, count: 100, setName: "edge-refresh" }),
      seedSessions({ ...access, count: 20, users: 10 }),
      seedUsers({ ...access, count: 10 }),
    ]);
    await Promise.all([
      client.uploadSeed("k6-tokens", tokens),
      client.uploadSeed("k6-refresh", families),
      client.uploadSeed("edge-refresh", edgeFamilies),
      client.uploadSeed("k6-sessions", sessions),
      client.uploadSeed("k6-users", users),
    ]);
    const url = async (name: string, request = {}) => (await client.seedUrl(name, { expiresIn: "1h", ...request })).url;
    // userinfo reads a local file holding the bare array of valid JWTs (Authrim's cloud form).
    const validArray = join(dir, "valid-tokens.json");
    await writeFile(validArray, await (await fetch(await url("k6-tokens", { format: "array", type: "valid" }))).text());
    seedEnv.userinfo = { TOKEN_PATH: validArray };
    seedEnv.introspect = { TOKEN_URL: await url("k6-tokens") };
    seedEnv["token-exchange"] = seedEnv.introspect;
    seedEnv.refresh = { TOKEN_URL: await url("k6-refresh") };
    edgeSeedEnv.refresh = { TOKEN_URL: await url("edge-refresh") };
    seedEnv["silent-auth"] = { TOKEN_URL: await url("k6-sessions") };
    seedEnv["otp-login"] = { TOKEN_URL: await url("k6-users") };
    // Warm the target after seeding (its isolate compiles the verification path on first
    // use): the short runs below measure it warm, as a real deployment is.
    const valid = JSON.parse(await readFile(validArray, "utf8")) as string[];
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        valid.slice(0, 10).map(async (token) => (await fetch(`${stack.targetUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()),
      );
    }
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("k6 inspect accepts every script and expands each preset as core/spec/presets.ts does", async () => {
    const cases = SCENARIOS.flatMap((scenario) => {
      const names = presetNames(scenario);
      // The first rung (rps100 has the short shape) full length, the top one scaled, and a
      // scale so small that every stage is held at its one-second minimum.
      return [
        [scenario, names[0]!, 1],
        [scenario, names.at(-1)!, 0.1],
        [scenario, names[0]!, 0.01],
      ] as const;
    });
    await Promise.all(
      cases.map(async ([scenario, preset, scale]) => {
        const { code, stdout, stderr } = await k6Run(["inspect", script(scenario)], { ...base, PRESET: preset, DURATION_SCALE: String(scale) });
        expect(code, stderr).toBe(0);
        const options = JSON.parse(stdout) as {
          scenarios: Record<string, { executor: string; stages: Array<{ target: number; duration: string }>; maxVUs: number }>;
          thresholds: Record<string, string[]>;
        };
        const expected = expandPreset(scenario, preset, scale);
        if (!expected.ok) throw new Error(expected.error);
        const k6Scenario = options.scenarios[scenario]!;
        expect(k6Scenario.executor).toBe("ramping-arrival-rate");
        expect(
          k6Scenario.stages.map((s) => ({ target: s.target, ms: parseDurationMs(s.duration) })),
          `${scenario} ${preset} ×${scale}`,
        ).toEqual(expected.value.stages.map((s) => ({ target: s.target, ms: parseDurationMs(s.duration) })));
        expect(k6Scenario.maxVUs).toBe(Math.max(50, expected.value.ratePerS));
        for (const [metric, exprs] of Object.entries(expected.value.thresholds)) expect(options.thresholds[metric]).toEqual(exprs);
      }),
    );
    const http = await k6Run(["inspect", script("http")], { BASE_URL: fixture.stack.targetUrl, PATH: "/delay?ms=20", RATE: "50", DURATION: "2s" });
    expect(http.code, http.stderr).toBe(0);
    expect(JSON.parse(http.stdout).scenarios.http).toMatchObject({ executor: "constant-arrival-rate", rate: 50, duration: "2s", maxVUs: 50 });
    // The same script becomes a k6 Cloud run from one variable.
    const cloud = await k6Run(["inspect", script("userinfo")], { ...base, K6_CLOUD_DISTRIBUTION: "amazon:us:ashburn:50,amazon:ie:dublin:50" });
    expect(JSON.parse(cloud.stdout).cloud.distribution).toEqual({
      "amazon:us:ashburn": { loadZone: "amazon:us:ashburn", percent: 50 },
      "amazon:ie:dublin": { loadZone: "amazon:ie:dublin", percent: 50 },
    });
    const bad = await k6Run(["inspect", script("introspect")], { ...base, PRESET: "rps7" });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown PRESET \\"rps7\\" for introspect');
  });

  /** Per scenario: the load (a preset for userinfo, a constant rate for the rest) and what its summary must show. */
  const RUNS: Record<(typeof SCENARIOS)[number], { load: Record<string, string>; check(m: Metrics): void }> = {
    userinfo: {
      load: { PRESET: "rps100", DURATION_SCALE: "0.05" },
      check(m) {
        expect(m.userinfo_success!.values).toMatchObject({ fails: 0 });
        expect(m["http_reqs{scenario:userinfo}"]!.values.count).toBeGreaterThan(350);
      },
    },
    introspect: {
      load: { RATE: "40", DURATION: "3s" },
      check(m) {
        expect(m.active_correct!.values).toMatchObject({ fails: 0 });
        expect(m.false_positives!.values.count).toBe(0);
        expect(m.false_negatives!.values.count).toBe(0);
        // The fixed shuffle spreads the set's mix over the run: every type was judged.
        for (const type of ["valid", "valid_exchanged", "expired", "revoked", "wrong_audience", "wrong_client"]) {
          expect(m[`active_correct{type:${type}}`]!.values.passes, type).toBeGreaterThan(0);
        }
        expect(m.wrong_client_rejected!.values.rate).toBe(1);
      },
    },
    "token-exchange": {
      load: { RATE: "40", DURATION: "3s" },
      check(m) {
        expect(m.token_exchange_success!.values).toMatchObject({ fails: 0 });
        expect(m.invalid_token_accepted!.values.count).toBe(0);
        expect(m.revoked_token_accepted!.values.count).toBe(0);
        expect(m.revoked_reason_reported!.values.rate).toBe(1);
        // Refused subjects answer 400 on purpose: not a failed request.
        expect(m["http_req_failed{scenario:token-exchange}"]!.values.passes).toBe(0);
      },
    },
    refresh: {
      load: { RATE: "30", DURATION: "3s" },
      check(m) {
        expect(m.rotation_success!.values).toMatchObject({ fails: 0 });
        expect(m.rotation_success!.values.passes).toBeGreaterThan(80);
        expect(m.families_lost?.values.count ?? 0).toBe(0);
      },
    },
    "silent-auth": {
      load: { RATE: "40", DURATION: "3s" },
      check(m) {
        expect(m.silent_auth_success!.values).toMatchObject({ fails: 0 });
        expect(m.login_required!.values.count).toBe(0);
      },
    },
    "otp-login": {
      load: { RATE: "8", DURATION: "3s" },
      check(m) {
        expect(m.otp_login_success!.values).toMatchObject({ fails: 0 });
        const logins = m.otp_login_success!.values.passes!;
        for (const step of ["authorize", "email_code", "verify", "authorize_silent", "token"]) {
          expect(m[`http_reqs{step:${step}}`]!.values.count, step).toBe(logins);
        }
        expect(m.otp_login_duration!.values["p(95)"]).toBeGreaterThan(m["http_req_duration{step:verify}"]!.values.med!);
      },
    },
  };

  // One at a time: six k6 runs at once against one local target on a 2-core machine make
  // the target, not the scripts, miss the presets' latency thresholds.
  it.each(SCENARIOS)("%s: a short run passes its checks and the preset's thresholds", async (scenario) => {
    const summaryPath = join(dir, `${scenario}.json`);
    const { code, stdout, stderr } = await k6Run(["run", "--quiet", "--include-system-env-vars=false", script(scenario)], {
      ...base,
      ...seedEnv[scenario],
      ...RUNS[scenario].load,
      SUMMARY_PATH: summaryPath,
    });
    const summary = JSON.parse(await readFile(summaryPath, "utf8")) as { metrics: Metrics; setup_data?: unknown };
    // Every answer's verdict passes; the presets' production latency thresholds may not on a
    // busy 2-core host (the time is the machine's), and then k6 exits 99 for them alone.
    const verdicts = Object.entries(summary.metrics).flatMap(([key, t]) =>
      Object.entries(t.thresholds ?? {}).map(([expr, o]) => [`${key} ${expr}`, o.ok] as const),
    );
    expect(
      verdicts.filter(([key, ok]) => !ok && !/duration/.test(key)),
      stdout,
    ).toEqual([]);
    expect(code, `${stdout}\n${stderr}`).toBe(verdicts.every(([, ok]) => ok) ? 0 : 99);
    expect(stdout).toMatch(/thresholds:\n( {2}[✓✗] .*\n)+/);
    expect(summary).not.toHaveProperty("setup_data");
    const m = summary.metrics;
    expect(m.checks!.values).toMatchObject({ fails: 0 });
    expect(m.checks!.values.passes).toBeGreaterThan(0);
    for (const [metric, t] of Object.entries(m))
      for (const [source, outcome] of Object.entries(t.thresholds ?? {})) expect(outcome.ok, `${metric}: ${source}`).toBe(true);
    // The edge scenario's metric names and kinds: nothing made up, every counter shown even at zero.
    const declared = EDGE_SCENARIOS[scenario]!.metrics;
    const custom = [...new Set(Object.keys(m).map((k) => k.replace(/\{.*$/, "")))].filter((k) => !BUILT_IN.test(k));
    for (const name of custom) expect(declared[name], `${name} is not a metric of the edge ${scenario} scenario`).toBe(m[name]!.type);
    for (const [name, kind] of Object.entries(declared)) if (kind === "counter") expect(m[name]?.values.count, name).toBeTypeOf("number");
    RUNS[scenario].check(m);
    k6Summaries[scenario] = m;
  });

  /** What each scenario's k6 run's handleSummary wrote, for the same script under edgeload. */
  const k6Summaries: Partial<Record<(typeof SCENARIOS)[number], Metrics>> = {};

  // The same scripts, unmodified, under `edgeload run script.js`: their handleSummary output
  // passes the same checks as k6's, with the same threshold verdicts and iteration counts
  // (an arrival-rate schedule: the crosscheck's max(1, 1%), plus one for k6's extra last one).
  it.each(SCENARIOS)("%s: the same script under edgeload run passes the same checks, with k6's verdicts", async (scenario) => {
    const summaryPath = join(dir, `${scenario}.edge.json`);
    const env = { ...base, ...seedEnv[scenario], ...edgeSeedEnv[scenario], ...RUNS[scenario].load, SUMMARY_PATH: summaryPath };
    const { code, stdout, stderr } = await runCli(["run", script(scenario), "--quiet", ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`])], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    const m = (JSON.parse(await readFile(summaryPath, "utf8")) as { metrics: Metrics }).metrics;
    const verdicts = (x: Metrics) =>
      Object.fromEntries(Object.entries(x).flatMap(([key, t]) => Object.entries(t.thresholds ?? {}).map(([expr, o]) => [`${key} ${expr}`, o.ok])));
    // Exit code and verdicts agree; the production presets' latency thresholds may fail on a
    // busy 2-core host (the time is the machine's), so only the answers' verdicts must hold.
    expect(code, `${stdout}\n${stderr}`).toBe(Object.values(verdicts(m)).every(Boolean) ? 0 : 99);
    const answers = (v: Record<string, boolean>) => Object.fromEntries(Object.entries(v).filter(([key]) => !/duration/.test(key)));
    expect(Object.values(answers(verdicts(m))).every(Boolean), JSON.stringify(verdicts(m))).toBe(true);
    expect(m.checks!.values).toMatchObject({ fails: 0 });
    RUNS[scenario].check(m);
    const k6 = k6Summaries[scenario];
    if (!k6) return; // the k6 run failed above, and said why
    expect(Object.keys(verdicts(m)).sort()).toEqual(Object.keys(verdicts(k6)).sort());
    expect(answers(verdicts(m))).toEqual(answers(verdicts(k6)));
    const iterations = [k6.iterations!.values.count!, m.iterations!.values.count!];
    expect(Math.abs(iterations[0]! - iterations[1]!), `k6 ${iterations[0]}, edgeload ${iterations[1]}`).toBeLessThanOrEqual(
      Math.max(2, Math.ceil(iterations[0]! * 0.01) + 1),
    );
  });
});
