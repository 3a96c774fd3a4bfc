/**
 * An externally-controlled run's control over HTTP (k6's `scale`, `pause`, `resume`), mounted
 * under /v1/runs behind the API token (a write: the read token is refused, access.ts):
 *
 *   PATCH /v1/runs/:id/control   {"vus": N} and/or {"paused": true|false}
 *
 * The route reads the body (core/run/vu-control.ts parseControlRequest) and hands it to the
 * run's RunCoordinator, which judges it against the run (coordinator/run/run-control.ts):
 * 400 naming the problem for a bad body, VUs above the run's maxVUs, a run that is not
 * externally controlled, not running yet, or ended; 404 for an unknown run.
 */
import { Hono } from "hono";
import { parseControlRequest } from "../../core/run/vu-control.ts";
import { runExists } from "../store/results-queries.ts";
import { badRequest, notFound } from "./api-errors.ts";
import { coordinatorFor } from "./coordinator-stub.ts";
import { RUN_ID } from "./run-id.ts";
import type { RoutesEnv } from "./routes-env.ts";

type App = { Bindings: RoutesEnv };

export const controlApi = new Hono<App>();

controlApi.patch("/:id/control", async (c) => {
  const id = c.req.param("id");
  // D1 first: an unknown id is answered without creating a Durable Object for it.
  if (!RUN_ID.test(id) || !(await runExists(c.env.DB, id))) throw notFound(`run ${id}`);
  const request = parseControlRequest(await c.req.json().catch(() => undefined));
  if (!request.ok) throw badRequest("bad control request", request.problems);
  const answer = await coordinatorFor(c.env, id).control(request.value);
  // Its coordinator let go of it: the run ended and was cleaned up.
  if (!answer) throw badRequest("the run cannot be controlled", [{ field: "status", detail: "the run has ended: nothing to control" }]);
  if (!answer.ok) throw badRequest("the run cannot be controlled", [...answer.problems]);
  const { control, maxVUs, shardsTold, shards } = answer;
  return c.json({ id, vus: control.vus, paused: control.paused, maxVUs, version: control.version, shardsTold, shards });
});
