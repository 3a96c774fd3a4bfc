/**
 * k6/html and res.html() beside real k6: a script that parses a page with parseHTML (find,
 * attr, each with k6 Elements, map with Selections) and a response with res.html() passes
 * the same checks under k6 v1.8.1 and under `edgeload run`, where the parser (cheerio) is
 * bundled with the script and runs in the shard's script isolate (workerd).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
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
    const k6Out = join(dir, "k6.json");
    await promisify(execFile)(k6, ["run", "--quiet", "--summary-export", k6Out, "-e", `BASE_URL=${fixture.stack.targetUrl}`, script], {
      maxBuffer: 16 << 20,
      env: { ...process.env, K6_NO_USAGE_REPORT: "true" },
    });
    const edgeOut = join(dir, "edge.json");
    const r = await runCli(["run", script, "--quiet", "--summary-export", edgeOut, "-e", `BASE_URL=${fixture.stack.targetUrl}`], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const checks = async (out: string) => (JSON.parse(await readFile(out, "utf8")) as Exported).metrics.checks;
    const k6Checks = await checks(k6Out);
    expect(k6Checks).toMatchObject({ passes: CHECKS * ITERATIONS, fails: 0 });
    expect(await checks(edgeOut)).toMatchObject({ passes: k6Checks?.passes, fails: k6Checks?.fails });
  });
});
