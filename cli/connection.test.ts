import { describe, expect, it } from "vitest";
import { CliError, EXIT, parseCliArgs } from "./connection.ts";

const options = {
  "admin-secret": { type: "string" },
  "client-id": { type: "string" },
  env: { type: "string", multiple: true, short: "e" },
  quiet: { type: "boolean" },
} as const;

describe("parseCliArgs", () => {
  it("takes a value that starts with a dash, as a base64url secret may", () => {
    const { values } = parseCliArgs({ args: ["--admin-secret", "-Xy_3k", "--client-id", "--c1"], options });
    expect(values["admin-secret"]).toBe("-Xy_3k");
    expect(values["client-id"]).toBe("--c1");
  });

  it("does the same for a short flag and for repeated options", () => {
    const { values } = parseCliArgs({ args: ["-e", "-A=1", "--env", "B=-2", "--env", "-C"], options });
    expect(values.env).toEqual(["-A=1", "B=-2", "-C"]);
  });

  it("still says a value is missing when the next argument is one of the command's options", () => {
    const error = (() => {
      try {
        parseCliArgs({ args: ["--admin-secret", "--quiet"], options });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).code).toBe(EXIT.invalidConfig);
    expect((error as CliError).message).toMatch(/--admin-secret.*ambiguous/);
  });

  it("leaves everything after -- alone", () => {
    const { positionals } = parseCliArgs({ args: ["--", "--admin-secret", "-x"], options, allowPositionals: true });
    expect(positionals).toEqual(["--admin-secret", "-x"]);
  });
});
