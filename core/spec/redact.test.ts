/**
 * Secrets by value (issue 48): what a stored or shown spec hides, by place (every `__ENV`
 * value unless public, headers but harmless ones, URL credentials, credential fields of
 * bodies) and then by value (a hidden value copied anywhere else).
 */
import { describe, expect, it } from "vitest";
import { hideIn, hideInSummary, REDACTED, redactSpec, secretHider } from "./redact.ts";
import { redactUrl, redactUrlsIn } from "./redact-url.ts";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";

const base = { target: "http://127.0.0.1:9090", steps: [{ path: "/delay?ms=20" }], executor: "constant-arrival-rate", rate: 10, duration: "5s" };
const scriptSpec = (script: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  validSpec({ ...base, steps: [{ name: "default", path: "/" }], script: { bundle: "a".repeat(64), ...script }, ...extra });
const stepSpec = (step: Record<string, unknown>, extra: Record<string, unknown> = {}) => validSpec({ ...base, steps: [step], ...extra });

describe("__ENV: every value hidden unless its name is marked public", () => {
  it.each([
    // Names the old rule (secret-looking names only) let through, each carrying a credential.
    ["KEY", "k-12345678"],
    ["DB_PASS", "hunter2hunter2"],
    ["PWD", "pa55word!"],
    ["JWT", "opaque-jwt-value"],
    ["BEARER", "bearer-value-1"],
    ["COOKIE", "sid=abcdef123"],
    ["SESSION", "sess-987654"],
    ["SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1"],
    // A name that says nothing at all.
    ["X", "anything-at-all"],
  ])("%s is hidden", (name, value) => {
    const shown = redactSpec(scriptSpec({ env: { [name]: value } }));
    expect(shown.script!.env).toEqual({ [name]: REDACTED });
    expect(JSON.stringify(shown)).not.toContain(value);
  });

  it("shows the values of names in script.publicEnv, with the credentials of a URL among them hidden", () => {
    const shown = redactSpec(
      scriptSpec({ env: { BASE_URL: "https://u:pw-secret-1@api.example", RATE: "200", TOKEN: "t-abcdef" }, publicEnv: ["BASE_URL", "RATE"] }),
    );
    expect(shown.script!.env).toEqual({ BASE_URL: `https://${REDACTED}@api.example`, RATE: "200", TOKEN: REDACTED });
    expect(shown.script!.publicEnv).toEqual(["BASE_URL", "RATE"]);
  });

  it("hides a BASE_URL not marked public in __ENV, yet leaves the run's target that equals it shown", () => {
    const shown = redactSpec(scriptSpec({ env: { BASE_URL: "https://api.example.com" } }, { target: "https://api.example.com" }));
    expect(shown.script!.env.BASE_URL).toBe(REDACTED);
    expect(shown.target).toBe("https://api.example.com");
  });

  it("refuses a publicEnv that is not a list of names, naming the field", () => {
    const problems = specProblems({ ...base, steps: [{ name: "default", path: "/" }], script: { bundle: "a".repeat(64), publicEnv: "BASE_URL" } });
    expect(problems.map((p) => p.field)).toContain("script.publicEnv");
  });
});

describe("headers: shown only under harmless names, and never when the value is a credential", () => {
  it.each([
    // Credential headers under names the old five-name deny-list missed.
    ["apikey", "k-1234567", REDACTED],
    ["private-token", "glpat-123456", REDACTED],
    ["ocp-apim-subscription-key", "sub-key-123456", REDACTED],
    ["x-tenant-secret", "tenant-secret-1", REDACTED],
    ["X-Session-Id", "s-123456789", REDACTED],
    // A name no list knows: hidden, as it may be anything.
    ["x-custom", "custom-value", REDACTED],
    // Harmless names keep their value…
    ["content-type", "application/json", "application/json"],
    ["Accept", "text/html", "text/html"],
    ["user-agent", "edgeload/1", "edgeload/1"],
    // …unless the value is a credential by its shape…
    ["user-agent", "Bearer abc.def-123", REDACTED],
    ["accept", "Basic dXNlcjpwYXNzd29yZA==", REDACTED],
    ["x-request-id", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_part", REDACTED],
    // …or a URL with credentials, of which only the credentials go.
    ["referer", "https://u:p@site.example/page?token=t1&x=1", `https://${REDACTED}@site.example/page?token=${REDACTED}&x=1`],
  ])("%s: %s → %s", (name, value, expected) => {
    expect(redactSpec(stepSpec({ path: "/", headers: { [name]: value } })).steps[0]!.headers[name]).toBe(expected);
  });

  it("hides setup and teardown steps' headers, named scenarios' and push outputs' alike", () => {
    const spec = validSpec({
      target: "http://127.0.0.1:9090",
      setup: [{ name: "login", path: "/login", headers: { "x-api-key": "setup-key-1" } }],
      teardown: [{ name: "bye", path: "/bye", headers: { cookie: "sid=teardown-1" } }],
      scenarios: {
        a: { executor: "constant-vus", vus: 1, duration: "5s", steps: [{ name: "s", path: "/", headers: { "x-auth": "scenario-tok-1" } }] },
      },
    });
    const text = JSON.stringify(redactSpec(spec));
    for (const secret of ["setup-key-1", "sid=teardown-1", "scenario-tok-1"]) expect(text).not.toContain(secret);
    const outputs = validSpec({ ...base, outputs: [{ type: "opentelemetry", url: "http://127.0.0.1:4318/v1/metrics?api_key=out-key-1" }] });
    expect(redactSpec(outputs).outputs![0]!.url).toBe(`http://127.0.0.1:4318/v1/metrics?api_key=${REDACTED}`);
  });
});

describe("URL credentials", () => {
  it.each([
    ["userinfo", "https://user:pass@host.example/x", `https://${REDACTED}@host.example/x`],
    ["a user alone (often the key itself)", "https://sk_live_1@host.example", `https://${REDACTED}@host.example`],
    ["api_key", "/p?api_key=k1&page=2", `/p?api_key=${REDACTED}&page=2`],
    ["token, access_token and sig", "/p?token=a&access_token=b&sig=c", `/p?token=${REDACTED}&access_token=${REDACTED}&sig=${REDACTED}`],
    [
      "AWS's signed URL",
      "/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=ff&X-Amz-Expires=60",
      `/o?X-Amz-Credential=${REDACTED}&X-Amz-Signature=${REDACTED}&X-Amz-Expires=60`,
    ],
    [
      "a fragment's access_token (OAuth's implicit flow)",
      "https://a.example/cb#access_token=t&state=s",
      `https://a.example/cb#access_token=${REDACTED}&state=s`,
    ],
    ["nothing to hide: as given, byte for byte", "/delay?ms=20&q=a%20b", "/delay?ms=20&q=a%20b"],
    ["a template is no credential", "/u?id={{data.id}}", "/u?id={{data.id}}"],
  ])("%s", (_, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it("hides them in the target and steps' paths of a stored spec", () => {
    const shown = redactSpec(stepSpec({ path: "/delay?ms=5&api_key=path-key-1" }, { target: "http://u:target-pw-1@127.0.0.1:9090" }));
    expect(shown.target).toBe(`http://${REDACTED}@127.0.0.1:9090`);
    expect(shown.steps[0]!.path).toBe(`/delay?ms=5&api_key=${REDACTED}`);
  });

  it("hides the credentials of every URL quoted in a message", () => {
    expect(redactUrlsIn("connection error: https://u:p@h.example/x?token=t failed; see http://ok.example/")).toBe(
      `connection error: https://${REDACTED}@h.example/x?token=${REDACTED} failed; see http://ok.example/`,
    );
  });
});

describe("bodies", () => {
  it.each([
    ["a JSON body's credential fields, at any depth", '{"user":"ann","password":"p4ssword","nested":{"client_secret":"cs-1"}}', "p4ssword"],
    ["a form body's credential parameters", "grant_type=password&username=ann&password=p4ssword", "p4ssword"],
    ["a JWT anywhere", "raw eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl text", "eyJhbGciOiJIUzI1NiJ9"],
  ])("hides %s", (_, body, secret) => {
    const shown = redactSpec(stepSpec({ method: "POST", path: "/", body })).steps[0]!.body!;
    expect(shown).not.toContain(secret);
    expect(shown).toContain(REDACTED);
  });

  it("leaves a body without credentials as given", () => {
    expect(redactSpec(stepSpec({ method: "POST", path: "/", body: '{"q": "shoes"}' })).steps[0]!.body).toBe('{"q": "shoes"}');
  });
});

describe("by value: a hidden value is hidden wherever else it was copied", () => {
  it("finds an __ENV value in a step's path, body and header, in the run's name and a var", () => {
    const secret = "marker-7f3a91";
    const spec = scriptSpec({ env: { API_KEY: secret } }, { name: `nightly ${secret}`, vars: { note: `k=${secret}` }, tags: { build: secret } });
    const withCopies = { ...spec, steps: [{ ...spec.steps[0]!, path: `/x/${secret}`, body: `{"q":"${secret}"}`, headers: { accept: secret } }] };
    const text = JSON.stringify(redactSpec(withCopies));
    expect(text).not.toContain(secret);
    expect(redactSpec(withCopies).name).toBe(`nightly ${REDACTED}`);
  });

  it("does not search for values shorter than 6 characters, which would blank ordinary words", () => {
    const shown = redactSpec(scriptSpec({ env: { MODE: "fast" } }, { name: "fast lane" }));
    expect(shown.name).toBe("fast lane");
  });

  it("leaves identifiers the results are keyed on: step names, the executor, thresholds", () => {
    const spec = scriptSpec({ env: { E: "constant-arrival-rate", S: "default" } }, { thresholds: { "http_req_duration{step:default}": ["p(95)<500"] } });
    const shown = redactSpec(spec);
    expect(shown.executor).toBe("constant-arrival-rate");
    expect(shown.steps[0]!.name).toBe("default");
    expect(shown.thresholds).toEqual(spec.thresholds);
  });

  it("is the same when applied twice (a stored spec redacted again changes nothing)", () => {
    const once = redactSpec(stepSpec({ path: "/p?token=tok-123456", headers: { authorization: "Bearer tok-123456" } }, { secrets: { a: "secret-aaaaaa" } }));
    expect(redactSpec(once)).toEqual(once);
  });

  it("hides the run's secrets in anything else about it: a summary's error samples and a script's console lines", () => {
    const hider = secretHider(scriptSpec({ env: { API_KEY: "marker-abc123" } }));
    const summary = {
      metrics: { "http_reqs{step:default}": { count: 1 } },
      edgeload: { errors: [{ error: "connection error: http://u:pw@h/x?api_key=marker-abc123", count: 1 }], logs: ["key is marker-abc123"] },
    };
    expect(hideIn(summary, hider)).toEqual({
      metrics: { "http_reqs{step:default}": { count: 1 } },
      edgeload: { errors: [{ error: `connection error: http://${REDACTED}@h/x?api_key=${REDACTED}`, count: 1 }], logs: [`key is ${REDACTED}`] },
    });
  });

  it("leaves a summary's identifiers as they are, so readers still match thresholds and steps", () => {
    // A value that is also a step's name ("checkout"): hidden in the free text, kept where it names.
    const hider = secretHider(scriptSpec({ env: { FLOW: "checkout" } }));
    const summary = {
      metrics: { "http_req_duration{step:checkout}": { "p(95)": 1 } },
      edgeload: {
        name: "checkout nightly",
        thresholds: [{ metric: "http_req_duration{step:checkout}", threshold: "p(95)<500", ok: true }],
        errors: [{ step: "checkout", error: "checkout failed", count: 2 }],
      },
    };
    expect(hideInSummary(summary, hider)).toEqual({
      ...summary,
      edgeload: { ...summary.edgeload, name: `${REDACTED} nightly`, errors: [{ step: "checkout", error: `${REDACTED} failed`, count: 2 }] },
    });
  });
});
