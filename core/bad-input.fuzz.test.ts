/**
 * Bad input, generated (test/support/bad-input-surfaces.ts): every parser at the edge answers
 * anything it is given with a value or with problems that name a field — it never throws.
 * 300 cases per surface here; `npm run bench -- --only fuzz` runs 10,000.
 */
import { describe, it } from "vitest";
import { BAD_INPUT_SURFACES, fuzzSurface } from "../test/support/bad-input-surfaces.ts";

describe("fuzzed bad input never throws, and every problem names a field", () => {
  it.each(BAD_INPUT_SURFACES.map((s) => [s.name, s] as const))("%s", (_name, surface) => {
    fuzzSurface(surface, 300);
  });
});
