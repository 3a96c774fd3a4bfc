/**
 * The dashboard's routes in workerd: view links and the session cookie they trade for, who
 * may do what with it, and the run's live event stream (history first, windows as they
 * merge, the summary and the end).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signGrant, VIEW_LINK_TTL_S } from "../../coordinator/http/dashboard-auth.ts";
import { createSseReader } from "../../core/formats/sse.ts";
import { api, createRun, waitForStatus } from "./helpers.ts";

const nowS = () => Math.floor(Date.now() / 1000);

async function link(body: Record<string, unknown> = {}, token = "test-token"): Promise<URL> {
  const response = await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify(body), token });
  expect(response.status).toBe(201);
  const { url, expiresAt } = (await response.json()) as { url: string; expiresAt: string };
  expect(Date.parse(expiresAt) / 1000 - nowS()).toBeGreaterThan(VIEW_LINK_TTL_S - 5);
  return new URL(url);
}

/** Opens a view link: the session cookie it sets and where it redirects. */
async function signIn(url: URL): Promise<{ cookie: string; location: string | null }> {
  const response = await api(url.pathname + url.search, { token: null, redirect: "manual" });
  expect(response.status).toBe(303);
  const setCookie = response.headers.get("set-cookie") ?? "";
  expect(setCookie).toMatch(/^edgeload_session=[^;]+;.*HttpOnly/);
  expect(setCookie).toContain("SameSite=Strict");
  return { cookie: setCookie.split(";")[0]!, location: response.headers.get("location") };
}

/** Reads a text/event-stream until it ends (or `untilMs`), as a list of [event, data]. */
async function readEvents(response: Response, untilMs: number): Promise<Array<[string, any]>> {
  const events: Array<[string, any]> = [];
  const sse = createSseReader((e) => events.push([e.event, JSON.parse(e.data)]));
  const reader = response.body!.getReader();
  for (;;) {
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, untilMs - Date.now())))]);
    if (next === null || next.done) break;
    sse.push(next.value);
  }
  await reader.cancel().catch(() => {});
  return events;
}

describe("dashboard links and sessions", () => {
  it("a view link signs a browser in and redirects to the page without the grant", async () => {
    const run = await createRun();
    const url = await link({ run: run.id });
    expect(url.pathname).toBe(`/v1/runs/${run.id}/dashboard`);
    expect(url.searchParams.get("view")).toMatch(/^all\.\d+\.[A-Za-z0-9_-]+$/);
    // The bearer token is nowhere in the link.
    expect(url.toString()).not.toContain("test-token");
    const { cookie, location } = await signIn(url);
    expect(location).toBe(`/v1/runs/${run.id}/dashboard`);
    const page = await api(`/v1/runs/${run.id}/dashboard`, { token: null, headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).toContain(`data-run-id="${run.id}"`);
    expect(html).toContain("/dashboard/vendor/uPlot.iife.min.js");
    // The cookie reads the API like the token does.
    expect((await api(`/v1/runs/${run.id}`, { token: null, headers: { cookie } })).status).toBe(200);
    await waitForStatus(run.id);
  });

  it("refuses expired, forged and swapped grants", async () => {
    const expired = await signGrant(env, "link", "all", nowS() - 1);
    const forged = `all.${nowS() + 600}.${"A".repeat(43)}`;
    // A session cookie value is not a view link, nor a link a session.
    const session = await signGrant(env, "session", "all", nowS() + 600);
    const linkGrant = await signGrant(env, "link", "all", nowS() + 600);
    for (const grant of [expired, forged, session, "all.x.y", ""]) {
      const response = await api(`/?view=${encodeURIComponent(grant)}`, { token: null, redirect: "manual" });
      expect(response.status, grant).toBe(401);
      expect(response.headers.get("set-cookie")).toBeNull();
    }
    expect(await (await api(`/?view=${encodeURIComponent(expired)}`, { token: null })).text()).toContain("expired");
    expect((await api("/v1/runs", { token: null, headers: { cookie: `edgeload_session=${linkGrant}` } })).status).toBe(401);
  });

  it("a read-only token's link gives a read-only session; a full session aborts only from its own origin", async () => {
    const run = await createRun({ duration: "20s", rate: 10 });
    const readOnly = await signIn(await link({ run: run.id }, "read-token"));
    const abortWith = (cookie: string, origin?: string) =>
      api(`/v1/runs/${run.id}/abort`, { method: "POST", token: null, headers: { cookie, ...(origin ? { origin } : {}) } });
    const refused = await abortWith(readOnly.cookie, "http://edgeload.test");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain("read-only dashboard session");
    expect(await api(`/v1/runs/${run.id}/dashboard`, { token: null, headers: { cookie: readOnly.cookie } }).then((r) => r.text())).toContain("read-only");

    const full = await signIn(await link({ run: run.id }));
    const crossSite = await abortWith(full.cookie, "https://evil.example");
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { type: string }).type).toMatch(/cross-origin$/);
    expect((await abortWith(full.cookie)).status).toBe(403); // no Origin at all
    expect((await abortWith(full.cookie, "http://edgeload.test")).status).toBe(202);
    expect((await waitForStatus(run.id)).status).toBe("aborted");
  });

  it("rejects a bad link request", async () => {
    const bad = await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify({ run: "not-a-run" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: Array<{ field: string }> }).problems[0]!.field).toBe("run");
    expect((await api("/v1/dashboard-links", { method: "POST", body: "{" })).status).toBe(400);
    expect((await link()).pathname).toBe("/");
  });
});

describe("the live event stream", () => {
  it("pushes windows as they merge, then the summary and the end; a late reader gets the history", async () => {
    const run = await createRun({ duration: "3s", rate: 40 });
    const live = await api(`/v1/runs/${run.id}/live`);
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = await readEvents(live, Date.now() + 30_000);
    const names = events.map(([name]) => name);
    expect(names[0]).toBe("history");
    expect(names.slice(-2)).toEqual(["summary", "end"]);
    const windows = events.filter(([name]) => name === "window").map(([, point]) => point);
    // A window holds what completed in its second, so on a busy host the last requests of a
    // 3 s run may finish in second 3: the windows run 0, 1, 2 and at most that one more.
    const lastWindow = windows.at(-1)!.t as number;
    expect([2, 3]).toContain(lastWindow);
    expect(windows.map((p) => p.t)).toEqual([...Array(lastWindow + 1).keys()]);
    const summary = (await (await api(`/v1/runs/${run.id}/summary`)).json()) as { metrics: { http_reqs: { count: number } } };
    expect(windows.reduce((sum, p) => sum + p.requests, 0)).toBe(summary.metrics.http_reqs.count);
    for (const p of windows) {
      expect(p.targetRate, `window ${p.t}`).toBe(40);
      // Each point splits its requests by region. The run's seconds have both regions; a
      // trailing second 3 has only the regions whose last requests answered after 3.0 s.
      const regions = Object.keys(p.regions).sort();
      if (p.t < 3) expect(regions, `window ${p.t}`).toEqual(["weur", "wnam"]);
      else expect(regions.length > 0 && regions.every((r) => r === "weur" || r === "wnam"), `window ${p.t}: ${regions}`).toBe(true);
      expect(
        Object.values(p.regions as Record<string, { requests: number }>).reduce((n, r) => n + r.requests, 0),
        `window ${p.t}`,
      ).toBe(p.requests);
    }
    const statuses = events.filter(([name]) => name === "status").map(([, s]) => s);
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses.at(-1).status).toBe("passed");
    const health = statuses.at(-1).shardHealth as Array<{ done: boolean; lastWindowS: number }>;
    expect(health.map((h) => h.done)).toEqual([true, true]);
    expect(health.every((h) => h.lastWindowS === 2 || h.lastWindowS === 3)).toBe(true);
    expect(Math.max(...health.map((h) => h.lastWindowS))).toBe(lastWindow);
    expect(events.at(-2)![1]).toEqual(summary);

    // After the run: everything at once, and the stream ends by itself.
    const again = await readEvents(await api(`/v1/runs/${run.id}/live`), Date.now() + 5_000);
    expect(again.map(([name]) => name)).toEqual(["history", "status", "summary", "end"]);
    expect(again[0]![1]).toEqual(windows);
  });

  it("answers 404 for a run that does not exist", async () => {
    expect((await api("/v1/runs/r-abcdefgh-12345678/live")).status).toBe(404);
  });
});
