/**
 * k6 script bundles in R2 (`scripts/<sha256>.json`), content-addressed: the CLI bundles a
 * script (k6-compat/bundle.ts) and uploads it under the SHA-256 of exactly the bytes it
 * sends; a run spec then names it (`script.bundle`). Uploading the same bundle twice is a
 * no-op; a body whose hash is not its name is refused, so a name always means one script.
 */
import { Hono } from "hono";
import { SCRIPT_ID, scriptObjectKey } from "../../core/spec/script-schema.ts";
import type { Problem } from "../../core/spec/input-problem.ts";
import type { RunSpec } from "../../core/spec/types.ts";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import type { Env } from "../../workers/env.ts";
import { ApiError, badRequest, limitedBody } from "./api-errors.ts";

/** A script with everything it opens; Worker Loader modules are kept well under this. */
export const MAX_SCRIPT_BYTES = 8 * 1024 * 1024;

type App = { Bindings: Env };

export const scriptsApi = new Hono<App>();

scriptsApi.put("/:id", async (c) => {
  const id = c.req.param("id");
  if (!SCRIPT_ID.test(id)) throw badRequest("bad script id", [{ field: "id", detail: "the SHA-256 (64 lowercase hex digits) of the body" }]);
  const bytes = await limitedBody(
    c.req.raw,
    MAX_SCRIPT_BYTES,
    () => new ApiError(413, "script-too-large", "Script too large", `upload at most ${MAX_SCRIPT_BYTES} bytes per bundle`),
  );
  const actual = await sha256Hex(bytes);
  if (actual !== id) throw badRequest("script id does not match its body", [{ field: "id", detail: `the body's SHA-256 is ${actual}` }]);
  let modules: unknown;
  try {
    modules = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw badRequest("the body must be a JSON script bundle", [{ field: "(body)", detail: "not valid JSON" }]);
  }
  const problems = ["main.js", "script.js"]
    .filter((m) => typeof (modules as Record<string, unknown> | null)?.[m] !== "string")
    .map((m) => ({ field: m, detail: "a bundle holds the modules main.js and script.js as strings (made by `edgeload run script.js`)" }));
  if (problems.length) throw badRequest("not a script bundle", problems);
  await c.env.SEEDS.put(scriptObjectKey(id), bytes, { httpMetadata: { contentType: "application/json" } });
  return c.json({ id, bytes: bytes.byteLength }, 201);
});

/** A run's scripts must have been uploaded, and the deployment able to run them. */
export async function checkScripts(spec: RunSpec, env: Env): Promise<Problem | null> {
  for (const named of spec.scenarios ?? []) {
    const problem = await checkScripts(named.spec, env);
    if (problem) return { ...problem, field: `scenarios.${named.name}.${problem.field}` };
  }
  if (!spec.script) return null;
  if (!env.LOADER) return { field: "script", detail: "this deployment has no Worker Loader binding (LOADER), so it cannot run k6 scripts" };
  const head = await env.SEEDS.head(scriptObjectKey(spec.script.bundle));
  return head ? null : { field: "script.bundle", detail: `no script bundle ${spec.script.bundle} (upload it with PUT /v1/scripts/${spec.script.bundle})` };
}
