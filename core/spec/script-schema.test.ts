import { describe, expect, it } from "vitest";
import { OTHER_TAGS_STEP, scriptStepOf } from "./script-schema.ts";

describe("scriptStepOf", () => {
  const steps = ["default", "login", OTHER_TAGS_STEP];
  it.each<[string, string | undefined, readonly string[], number]>([
    ["an untagged request is the function's own", undefined, steps, 0],
    ["a request tagged with a step a threshold names is that step's", "login", steps, 1],
    ["a request tagged with any other step or name is kept apart from the function's", "checkout", steps, 2],
    ["setup() and teardown() have no steps", "checkout", [], 0],
  ])("%s", (_, tag, list, expected) => {
    expect(scriptStepOf(tag, list)).toBe(expected);
  });

  it("refuses a tagged request of a run with no step for other tags, rather than count it as the function's", () => {
    expect(() => scriptStepOf("checkout", ["default", "login"])).toThrow(/request tagged step "checkout": the run has no step of that name/);
  });
});
