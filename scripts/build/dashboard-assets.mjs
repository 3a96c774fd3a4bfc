#!/usr/bin/env node
/**
 * Copies the dashboard's charting library (uPlot, from node_modules) into the Worker's
 * static assets, dashboard/public/dashboard/vendor/. It runs before every build that
 * serves them: wrangler's [build] (deploy and dev), the local stack and `npm test`. The
 * copy is not committed (see .gitignore): it comes from the installed package.
 *
 * Plain Node ESM with no dependencies, so it runs under any Node that runs npm.
 */
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const vendor = join(root, "dashboard/public/dashboard/vendor");
const FILES = ["uPlot.iife.min.js", "uPlot.min.css"];

export function buildDashboardAssets() {
  const require = createRequire(join(root, "package.json"));
  const uplotDir = join(dirname(require.resolve("uplot/package.json")), "dist");
  mkdirSync(vendor, { recursive: true });
  for (const file of FILES) {
    const from = join(uplotDir, file);
    const to = join(vendor, file);
    // Copy only when the installed file differs, so wrangler's watcher sees no change.
    let same = false;
    try {
      same = statSync(to).size === statSync(from).size && readFileSync(to).equals(readFileSync(from));
    } catch {}
    if (!same) copyFileSync(from, to);
  }
  return vendor;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) buildDashboardAssets();
