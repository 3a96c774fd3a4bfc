/**
 * The same bench against older code, in the same run: `--baseline REV` starts that
 * revision's own local stack beside this tree's, so a change is judged by a ratio measured
 * side by side on one machine at one moment, not against a figure from another day.
 *
 * The revision is checked out once as a git worktree under .cache/bench-baseline/ (ignored
 * by git, the linters and the tests) and shares this checkout's node_modules; its
 * cli/local-stack.ts (scripts/cli/ before the CLI became a room of its own) is imported
 * from there, so the workers it starts are built from that revision's sources.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ephemeralStateDir, PROJECT_ROOT, type LocalStack } from "../../cli/local-stack.ts";

export interface BaselineStack {
  /** What the tables call it: the revision as asked, with its short hash. */
  readonly label: string;
  readonly stack: LocalStack;
}

/** Starts `rev`'s local stack (checked out on first use); throws naming the revision if git does not know it. */
export async function startBaselineStack(rev: string): Promise<BaselineStack> {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: PROJECT_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  let sha: string;
  try {
    sha = git("rev-parse", "--verify", "--quiet", `${rev}^{commit}`);
  } catch {
    throw new Error(`--baseline ${rev}: not a commit in this repository (try a hash from \`git log --oneline\`)`);
  }
  const dir = join(PROJECT_ROOT, ".cache", "bench-baseline", sha.slice(0, 12));
  if (!existsSync(join(dir, "package.json"))) {
    mkdirSync(join(PROJECT_ROOT, ".cache", "bench-baseline"), { recursive: true });
    git("worktree", "add", "--force", "--detach", dir, sha);
  }
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(PROJECT_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  const localStack = ["cli/local-stack.ts", "scripts/cli/local-stack.ts"].map((p) => join(dir, p)).find((p) => existsSync(p));
  if (!localStack) throw new Error(`--baseline ${rev}: that revision has no local stack (cli/local-stack.ts) to start`);
  const { startLocalStack } = (await import(pathToFileURL(localStack).href)) as {
    startLocalStack: (options: { persist: string }) => Promise<LocalStack>;
  };
  // Its state where this tree's ephemeral state is (older revisions put `persist: false` on
  // the disk), so the two stacks' storage costs the same.
  const state = await ephemeralStateDir("edgeload-baseline-");
  const stack = await startLocalStack({ persist: state });
  const stop = async () => {
    await stack.stop();
    await rm(state, { recursive: true, force: true });
  };
  return { label: `${rev === sha.slice(0, rev.length) ? "" : `${rev} `}@${sha.slice(0, 7)}`, stack: { ...stack, stop } };
}
