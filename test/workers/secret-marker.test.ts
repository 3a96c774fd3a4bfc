/**
 * Secrets by value (issue 48), end to end: a run planted with a marker secret in every place
 * a user puts one — a URL's userinfo and query, a bearer header, a custom header, `secrets`,
 * a script's `__ENV` under a name that does not look secret, a push output's URL and
 * headers, the run's name — and then the marker is looked for everywhere the run is stored,
 * shown or exported: every row of every D1 table, every API answer about it (status while
 * it runs and after, summary, report, list, SQL, timeseries, metrics), a schedule made of
 * the same spec, and the Durable Objects' storage once the run is over.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import { api, spec, waitForStatus } from "./helpers.ts";

/** Unique per test run, so a match can only come from this file's runs. */
const MARKER = `marker-7f3a${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;

const target = new URL(env.TARGET_URL);
/** The loopback target with the marker as its userinfo's password. */
const targetWithUser = `${target.protocol}//user:${MARKER}-pw@${target.host}`;

async function post(path: string, body: unknown): Promise<Response> {
  return api(path, { method: "POST", body: JSON.stringify(body) });
}

/** Every row of every table of the results database, as one text. */
async function dumpD1(): Promise<string> {
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{
    name: string;
  }>();
  expect(tables.results.map((t) => t.name)).toEqual(expect.arrayContaining(["runs", "shards", "windows", "histograms", "schedules"]));
  const dumps = await Promise.all(
    tables.results.map(async ({ name }) => `${name}: ${JSON.stringify((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results)}`),
  );
  return dumps.join("\n");
}

/** Everything the API answers about a run, as one text. */
async function apiAnswers(id: string): Promise<string> {
  const paths = [
    `/v1/runs/${id}`,
    `/v1/runs/${id}/summary`,
    `/v1/runs/${id}/report`,
    `/v1/runs/${id}/report?format=json`,
    `/v1/runs`,
    `/v1/runs/${id}/timeseries`,
    `/v1/runs/${id}/metrics`,
  ];
  const answers = await Promise.all(
    paths.map(async (p) => {
      const response = await api(p);
      return { path: p, status: response.status, text: await response.text() };
    }),
  );
  const sql = await post("/v1/sql", { sql: "SELECT * FROM runs" });
  answers.push({ path: "/v1/sql", status: sql.status, text: await sql.text() });
  // Each answered: an error page would hold no marker for the wrong reason.
  expect(answers.map((a) => [a.path, a.status])).toEqual([...paths, "/v1/sql"].map((p) => [p, 200]));
  return answers.map((a) => `${a.path}: ${a.text}`).join("\n");
}

/** A spec with the marker in every place a user puts a credential. */
function plantedSpec(): Record<string, unknown> {
  return spec({
    // The run's name quotes the bearer token, as a careless name might.
    name: `nightly ${MARKER}-bearer`,
    target: targetWithUser,
    steps: [
      {
        path: `/delay?ms=5&api_key=${MARKER}-query`,
        headers: { authorization: `Bearer ${MARKER}-bearer`, "x-tenant": `${MARKER}-custom`, accept: "application/json" },
        checks: [{ status: 200 }],
      },
      // Redirected off the allowed targets, to a URL quoting the token: refused, and the
      // error sample that names the URL is stored with the run (.invalid never resolves).
      { name: "redirected", path: `/delay?ms=0&redirect=${encodeURIComponent(`https://edgeload-test.invalid/${MARKER}-bearer`)}` },
    ],
    secrets: { key: `${MARKER}-secret` },
    outputs: [{ type: "opentelemetry", url: `${env.TARGET_URL}/v1/metrics?token=${MARKER}-output`, headers: { "x-api-key": `${MARKER}-outhdr` } }],
    rate: 20,
    duration: "2s",
  });
}

describe("a marker secret planted in a run", () => {
  it("is in no D1 table, no API answer, no summary or export, and no Durable Object once the run is over", async () => {
    const created = await post("/v1/runs", plantedSpec());
    const createdText = await created.text();
    expect(created.status, createdText).toBe(201);
    const { id } = JSON.parse(createdText) as { id: string };
    // The answers to creating it and to planning it show the spec redacted.
    const planned = await post("/v1/plan", plantedSpec());
    const plannedText = await planned.text();
    expect(planned.status, plannedText).toBe(200);
    for (const text of [createdText, plannedText]) expect(text.includes(MARKER), text).toBe(false);
    // The marker really went in: the coordinator holds the spec as given while it runs.
    const coordinator = env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(id));
    const held = await runInDurableObject(coordinator, (_i, state) => JSON.stringify(state.storage.kv.get("run")));
    expect(held).toContain(`${MARKER}-bearer`);
    // While it runs: its status and live summary show it redacted.
    const live = [await (await api(`/v1/runs/${id}`)).text(), await (await api(`/v1/runs/${id}/summary`)).text()].join("\n");
    expect(live).not.toContain(MARKER);
    expect(live).toContain("[redacted]");

    const final = await waitForStatus(id);
    expect(final.target).toBe(`${target.protocol}//[redacted]@${target.host}`);
    expect(final.name).toBe("nightly [redacted]");

    const shard = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${id}/0`));
    const objects = [
      await runInDurableObject(coordinator, (_i, state) => JSON.stringify(["run", "summary"].map((k) => state.storage.kv.get(k)))),
      // Whatever the shard still keeps (its tombstone once its done was acknowledged: workers/shard/shard-end.ts).
      await runInDurableObject(shard, (_i, state) => JSON.stringify([...state.storage.kv.list()])),
    ].join("\n");
    expect(objects).toContain(id);

    const answers = await apiAnswers(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as { edgeload: { target: string; errors: unknown[] } };
    expect(summary.edgeload.target).toBe(final.target);
    // The refused redirect's error sample is there, the token it quoted hidden by value.
    expect(summary.edgeload.errors).toContainEqual({
      step: "redirected",
      error: expect.stringContaining("https://edgeload-test.invalid/[redacted]"),
      count: 20,
    });

    for (const [where, text] of [
      ["the API", answers],
      ["the Durable Objects", objects],
      ["D1", await dumpD1()],
    ] as const) {
      expect(text.includes(MARKER), `${where} holds the marker:\n${text.slice(Math.max(0, text.indexOf(MARKER) - 300), text.indexOf(MARKER) + 100)}`).toBe(
        false,
      );
    }
  });

  it("in a k6 script's __ENV under a name that says nothing, is stored nowhere, while a name marked public is shown", async () => {
    const bundle = JSON.stringify({ "main.js": "export default {}", "script.js": "export const files = {};" });
    const bundleId = await sha256Hex(bundle);
    expect((await api(`/v1/scripts/${bundleId}`, { method: "PUT", body: bundle })).status).toBe(201);
    const scripted = spec({
      target: env.TARGET_URL,
      script: { bundle: bundleId, exec: "default", env: { REGION_HINT: `${MARKER}-env`, BASE_URL: env.TARGET_URL, PAGE: "/delay" }, publicEnv: ["PAGE"] },
      steps: [{ name: "default", path: "/" }],
      // One iteration: the bundle is no real script, so each iteration only fails.
      executor: "shared-iterations",
      vus: 1,
      iterations: 1,
      rate: undefined,
      duration: undefined,
      shards: 1,
      regions: ["wnam"],
    });
    const created = await post("/v1/runs", scripted);
    const createdText = await created.text();
    expect(created.status, createdText).toBe(201);
    const { id } = JSON.parse(createdText) as { id: string };
    await waitForStatus(id);
    const stored = await env.DB.prepare("SELECT spec_json FROM runs WHERE id = ?").bind(id).first<{ spec_json: string }>();
    expect(JSON.parse(stored!.spec_json).script.env).toEqual({ REGION_HINT: "[redacted]", BASE_URL: "[redacted]", PAGE: "/delay" });
    const text = [await apiAnswers(id), await dumpD1()].join("\n");
    expect(text.includes(MARKER), text.slice(Math.max(0, text.indexOf(MARKER) - 300), text.indexOf(MARKER) + 100)).toBe(false);
  });

  it("in a schedule's spec, is kept by its vault only: not in D1 nor in what the API shows of it", async () => {
    const created = await post("/v1/schedules", { name: "marker", cron: "0 3 * * *", spec: plantedSpec() });
    const createdText = await created.text();
    expect(created.status, createdText).toBe(201);
    const { id } = JSON.parse(createdText) as { id: string };
    const shown = [createdText, await (await api(`/v1/schedules/${id}`)).text(), await (await api("/v1/schedules")).text()].join("\n");
    expect(shown).toContain("[redacted]");
    const text = [shown, await dumpD1()].join("\n");
    expect(text.includes(MARKER), text.slice(Math.max(0, text.indexOf(MARKER) - 300), text.indexOf(MARKER) + 100)).toBe(false);
    await api(`/v1/schedules/${id}`, { method: "DELETE" });
  });
});
