/**
 * `edgeload run spec.json --var NAME=VALUE --secret NAME=VALUE`: values set on the command
 * line (k6's `-e NAME=VALUE`), so one spec serves two builds or two environments, and
 * credentials stay out of the file. A secret written in the spec as `"@local:adminSecret"`
 * is the running local stack's target admin secret (see `edgeload dev`), so examples that
 * write through the target's admin API run as written against the local stack.
 */
import { CliError, EXIT } from "./connection.ts";
import type { DevFile } from "./dev-file.ts";

export const LOCAL_ADMIN_SECRET = "@local:adminSecret";

/** NAME=VALUE pairs of a repeated flag, refusing anything else by name. */
export function namedValues(flag: string, entries: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of entries ?? []) {
    const eq = entry.indexOf("=");
    const name = eq > 0 ? entry.slice(0, eq) : "";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`--${flag}: "${entry}" is not NAME=VALUE`, EXIT.invalidConfig);
    out[name] = entry.slice(eq + 1);
  }
  return out;
}

/**
 * The spec with the command line's vars and secrets merged in (they win), and local
 * markers resolved. `dev` is the running local stack, if any.
 */
export function withOverrides(spec: unknown, vars: Record<string, string>, secrets: Record<string, string>, dev: DevFile | null): unknown {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) return spec;
  const s = spec as Record<string, unknown>;
  const merged = (own: unknown, extra: Record<string, string>) => ({ ...(typeof own === "object" && own !== null ? own : {}), ...extra });
  const allSecrets: Record<string, unknown> = merged(s.secrets, secrets);
  for (const [name, value] of Object.entries(allSecrets)) {
    if (value !== LOCAL_ADMIN_SECRET) continue;
    if (!dev)
      throw new CliError(
        `secrets.${name} is ${LOCAL_ADMIN_SECRET}: that needs a running local stack (\`edgeload dev\`), or give it with --secret ${name}=VALUE`,
        EXIT.invalidConfig,
      );
    allSecrets[name] = dev.targetAdminSecret;
  }
  return {
    ...s,
    ...(Object.keys(vars).length || s.vars !== undefined ? { vars: merged(s.vars, vars) } : {}),
    ...(Object.keys(allSecrets).length ? { secrets: allSecrets } : {}),
  };
}
