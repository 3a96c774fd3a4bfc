/**
 * The dashboard's routes in workerd: view links and the session cookie they trade for, who
 * may do what with it, and the run's live event stream (history first, windows as they
 * merge, the summary and the end).
 */
import { describe, expect, it } from "vitest";
import { CSRF_HEADER, VIEW_LINK_TTL_S } from "../../coordinator/http/dashboard-auth.ts";
import { newGrant, signGrant } from "../../coordinator/http/view-grant.ts";
import { createSseReader } from "../../core/formats/sse.ts";
import { api, createRun, READ_TOKEN, TOKEN, waitForStatus } from "./helpers.ts";

const nowS = () => Math.floor(Date.now() / 1000);

async function link(body: Record<string, unknown> = {}, token = TOKEN): Promise<URL> {
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
  expect(setCookie).toMatch(/^edgeload_view_[a-z]+[^=]*=[^;]+;.*HttpOnly/);
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
  it("a view link signs a browser in to its page once, and redirects to it without the grant", async () => {
    const run = await createRun();
    const url = await link({ run: run.id });
    expect(url.pathname).toBe(`/v1/runs/${run.id}/dashboard`);
    // The bearer token is nowhere in the link.
    expect(url.toString()).not.toContain(TOKEN);
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
    // A read-only page: no CSRF token, the button off.
    expect(html).not.toContain("data-csrf");
    // The cookie reads what the page reads.
    expect((await api(`/v1/runs/${run.id}`, { token: null, headers: { cookie } })).status).toBe(200);
    expect((await api(`/v1/runs/${run.id}/summary`, { token: null, headers: { cookie } })).status).not.toBe(403);
    // Opened a second time (a replay, a chat app's preview): refused, no cookie.
    const again = await api(url.pathname + url.search, { token: null, redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toContain("opened before");
    await waitForStatus(run.id);
  });

  it("a session reads its own run only, and writes nothing", async () => {
    const [mine, other] = [await createRun(), await createRun()];
    const { cookie } = await signIn(await link({ run: mine.id }));
    const as = (path: string, init: RequestInit = {}) => api(path, { ...init, token: null, headers: { cookie, origin: "http://edgeload.test" } });
    for (const path of [`/v1/runs/${other.id}`, `/v1/runs/${other.id}/summary`, "/v1/runs", "/v1/schedules", `/v1/runs/${mine.id}/compare/${other.id}`]) {
      const response = await as(path);
      expect(response.status, path).toBe(403);
      expect(((await response.json()) as { type: string }).type, path).toMatch(/outside-view$/);
    }
    expect((await as(`/v1/runs/${other.id}/dashboard`)).status).toBe(401);
    for (const [method, path] of [
      ["POST", "/v1/sql"],
      ["POST", "/v1/runs"],
      ["POST", "/v1/dashboard-links"],
      ["POST", `/v1/runs/${mine.id}/abort`],
    ] as const) {
      expect((await as(path, { method, body: "{}" })).status, `${method} ${path}`).toBe(403);
    }
    await Promise.all([waitForStatus(mine.id), waitForStatus(other.id)]);
  });

  it("refuses expired, forged, swapped and other pages' grants", async () => {
    const run = await createRun();
    const view = { kind: "run", id: run.id } as const;
    const expired = await signGrant(TOKEN, "link", newGrant(view, false, nowS() - 1));
    const forged = `${expired.split(".")[0]}.${"A".repeat(43)}`;
    // A session cookie value is not a view link, nor a link a session.
    const session = await signGrant(TOKEN, "session", newGrant(view, false, nowS() + 600));
    const linkGrant = await signGrant(TOKEN, "link", newGrant(view, false, nowS() + 600));
    const page = `/v1/runs/${run.id}/dashboard`;
    for (const grant of [expired, forged, session, "all.x.y", ""]) {
      const response = await api(`${page}?view=${encodeURIComponent(grant)}`, { token: null, redirect: "manual" });
      expect(response.status, grant).toBe(401);
      expect(response.headers.get("set-cookie")).toBeNull();
    }
    expect(await (await api(`${page}?view=${encodeURIComponent(expired)}`, { token: null })).text()).toContain("expired");
    // A run's link opens its own page only.
    const elsewhere = await api(`/?view=${encodeURIComponent(linkGrant)}`, { token: null, redirect: "manual" });
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.text()).toContain("another page");
    expect((await api(page, { token: null, headers: { cookie: `edgeload_view_run_${run.id}=${linkGrant}` } })).status).toBe(401);
    await waitForStatus(run.id);
  });

  it("an abort link's session aborts its run only with its CSRF token and from its own origin", async () => {
    const run = await createRun({ duration: "20s", rate: 10 });
    const readOnly = await signIn(await link({ run: run.id }, READ_TOKEN));
    const abortWith = (cookie: string, headers: Record<string, string>) =>
      api(`/v1/runs/${run.id}/abort`, { method: "POST", token: null, headers: { cookie, ...headers } });
    const sameSite = { origin: "http://edgeload.test" };
    expect((await abortWith(readOnly.cookie, sameSite)).status).toBe(403);
    // The read token gets no abort link; the full token does.
    const refusedLink = await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify({ run: run.id, abort: true }), token: READ_TOKEN });
    expect(refusedLink.status).toBe(403);
    const full = await signIn(await link({ run: run.id, abort: true }));
    const html = await (await api(`/v1/runs/${run.id}/dashboard`, { token: null, headers: { cookie: full.cookie } })).text();
    const csrf = /data-csrf="([0-9a-f]{64})"/.exec(html)?.[1];
    expect(csrf).toMatch(/^[0-9a-f]{64}$/);
    expect((await abortWith(full.cookie, sameSite)).status).toBe(403); // no CSRF token
    expect((await abortWith(full.cookie, { ...sameSite, [CSRF_HEADER]: "0".repeat(64) })).status).toBe(403);
    expect((await abortWith(full.cookie, { origin: "https://evil.example", [CSRF_HEADER]: csrf! })).status).toBe(403);
    expect((await abortWith(full.cookie, { [CSRF_HEADER]: csrf! })).status).toBe(403); // no Origin at all
    // Another session's token does not fit this cookie.
    const other = await signIn(await link({ run: run.id, abort: true }));
    expect((await abortWith(other.cookie, { ...sameSite, [CSRF_HEADER]: csrf! })).status).toBe(403);
    expect((await abortWith(full.cookie, { ...sameSite, [CSRF_HEADER]: csrf! })).status).toBe(202);
    expect((await waitForStatus(run.id)).status).toBe("aborted");
  });

  it("rejects a bad link request", async () => {
    const bad = await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify({ run: "not-a-run" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: Array<{ field: string }> }).problems[0]!.field).toBe("run");
    expect((await api("/v1/dashboard-links", { method: "POST", body: "{" })).status).toBe(400);
    const two = await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify({ run: "r-mk0abc12-0123abcd", schedule: "s-mk0abc12-0123abcd" }) });
    expect(two.status).toBe(400);
    expect((await api("/v1/dashboard-links", { method: "POST", body: JSON.stringify({ schedule: "s-mk0abc12-0123abcd", abort: true }) })).status).toBe(403);
    expect((await link()).pathname).toBe("/");
    expect((await link({ schedule: "s-mk0abc12-0123abcd" })).pathname).toBe("/v1/schedules/s-mk0abc12-0123abcd/dashboard");
    expect((await link({ compare: ["r-mk0abc12-0123abcd", "r-mk0abc12-4567abcd"] })).pathname).toBe(
      "/v1/runs/r-mk0abc12-0123abcd/compare/r-mk0abc12-4567abcd/dashboard",
    );
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
