/**
 * k6/html and res.html() beside real k6: a script that parses a page with parseHTML (find,
 * attr, each with k6 Elements, map with Selections) and a response with res.html() passes
 * the same checks under k6 v1.8.1 and under `edgeload run`, where the parser (cheerio) is
 * bundled with the script and runs in the shard's script isolate (workerd).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6 } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = { metrics: Record<string, { passes?: number; fails?: number }> };

const ITERATIONS = 2;
const CHECKS = 5;

const SCRIPT = `
import http from "k6/http";
import { check } from "k6";
import { parseHTML } from "k6/html";

export const options = { vus: 1, iterations: ${ITERATIONS} };

const PAGE = '<html><body><ul id="items"><li class="item" data-n="1">One</li><li class="item">Two</li></ul><a href="/next" rel="next">n</a></body></html>';

export default function () {
  const doc = parseHTML(PAGE);
  check(doc, {
    "two items": (d) => d.find("li.item").size() === 2,
    "attr with a default": (d) => d.find("a[rel=next]").attr("href") === "/next" && d.find("a").attr("nope", "none") === "none",
    "each gives Elements": (d) => { const t = []; d.find("li").each((i, el) => t.push(i + el.nodeName() + el.textContent())); return t.join(",") === "0liOne,1liTwo"; },
    "map gives Selections": (d) => d.find("li").map((i, s) => s.text()).join(",") === "One,Two",
  });
  const res = http.get(__ENV.BASE_URL + "/delay?ms=5");
  check(res, { "res.html() reads the body": (r) => r.html().text() === r.body });
}
`;

describeWithK6("k6/html beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-script-html-");
  let script: string;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-script-html-"));
    script = join(dir, "html.js");
    await writeFile(script, SCRIPT);
  });

  it("passes the same checks under k6 and edgeload run", async () => {
    const args = ["-e", `BASE_URL=${fixture.stack.targetUrl}`];
    const k6Run = await runUnderK6<Exported>(k6, script, args, join(dir, "k6.json"));
    const edgeRun = await runUnderEdgeload<Exported>(fixture, script, args, join(dir, "edge.json"));
    expect(k6Run.code).toBe(0);
    expect(edgeRun.code, edgeRun.output).toBe(0);
    const k6Checks = k6Run.summary.metrics.checks;
    expect(k6Checks).toMatchObject({ passes: CHECKS * ITERATIONS, fails: 0 });
    expect(edgeRun.summary.metrics.checks).toMatchObject({ passes: k6Checks?.passes, fails: k6Checks?.fails });
  });
});
