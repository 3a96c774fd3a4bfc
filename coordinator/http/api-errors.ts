/**
 * Boundary failures as one error hierarchy that knows its HTTP response, rendered as
 * RFC 9457 `application/problem+json` by the API's single onError handler. Internals
 * (stack traces, upstream messages) never go on the wire.
 */
import type { Problem } from "../../core/spec/input-problem.ts";

const TYPE_BASE = "https://edgeload.dev/problems/";

export class ApiError extends Error {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
  readonly detail: string;
  readonly problems: readonly Problem[];

  constructor(status: number, slug: string, title: string, detail: string, problems: readonly Problem[] = []) {
    super(detail);
    this.status = status;
    this.slug = slug;
    this.title = title;
    this.detail = detail;
    this.problems = problems;
  }

  toResponse(instance: string): Response {
    const body = {
      type: TYPE_BASE + this.slug,
      title: this.title,
      status: this.status,
      detail: this.detail,
      instance,
      ...(this.problems.length ? { problems: this.problems } : {}),
    };
    return new Response(JSON.stringify(body, null, 2), {
      status: this.status,
      headers: { "content-type": "application/problem+json", ...(this.status === 401 ? { "www-authenticate": 'Bearer realm="edgeload"' } : {}) },
    });
  }
}

export const invalidSpec = (problems: readonly Problem[]) =>
  new ApiError(
    400,
    "invalid-spec",
    "Invalid run spec",
    `${problems.length} problem${problems.length === 1 ? "" : "s"} in the run spec: ${problems.map((p) => p.field).join(", ")}`,
    problems,
  );

export const badRequest = (detail: string, problems: readonly Problem[] = []) => new ApiError(400, "bad-request", "Bad request", detail, problems);
export const unauthorized = () => new ApiError(401, "unauthorized", "Unauthorized", "send Authorization: Bearer <EDGELOAD_API_TOKEN>");
export const forbidden = (slug: string, title: string, detail: string, problems: readonly Problem[] = []) => new ApiError(403, slug, title, detail, problems);
export const notFound = (what: string) => new ApiError(404, "not-found", "Not found", `${what} does not exist`);
export const tooManyRuns = (limit: number) =>
  new ApiError(429, "too-many-runs", "Too many concurrent runs", `this deployment allows ${limit} concurrent runs; wait for one to finish or abort one`);
export const notConfigured = (what: string) => new ApiError(503, "not-configured", "Not configured", what);

/** 409 for a run that has not ended yet, when `action` needs its final figures. */
export const runNotFinished = (id: string, status: string, action: string) =>
  new ApiError(409, "run-not-finished", "Run not finished", `run ${id} is still ${status}; ${action} it once it has ended`);
/** A baseline must be a run whose own verdict passed: a failed or inconclusive one would ratchet its figures in. */
export const runNotPassed = (id: string, status: string) =>
  new ApiError(409, "run-not-passed", "Run did not pass", `run ${id} ended ${status}; only a run whose own verdict passed can be a baseline`);

/**
 * A request body of at most `maxBytes`, refused with `tooLarge` from its declared length
 * before reading and from its real length after.
 */
export async function limitedBody(request: Request, maxBytes: number, tooLarge: () => ApiError): Promise<ArrayBuffer> {
  if (Number(request.headers.get("content-length") ?? NaN) > maxBytes) throw tooLarge();
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > maxBytes) throw tooLarge();
  return bytes;
}
