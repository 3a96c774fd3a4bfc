#!/usr/bin/env node
// The `edgeload` entry point. Plain JavaScript so that any Node can start it: when the
// Node running it is older than wrangler needs (22.12), it re-runs itself with the Node
// the project installs (the `node` package), then loads the TypeScript CLI, which that
// Node runs directly (type stripping).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [major, minor] = process.versions.node.split(".").map(Number);
const modern = major > 22 || (major === 22 && minor >= 18);

if (!modern) {
  const bundled = join(here, "../node_modules/node/bin/node");
  if (!existsSync(bundled)) {
    console.error(`edgeload needs Node >= 22.18 (this is ${process.version}); run \`npm install\` to get the project's own Node.`);
    process.exit(1);
  }
  const child = spawnSync(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2));
