/**
 * Starts the real target Worker for the in-workerd fault rows, with an admin secret so the
 * rows can read its request ledger (what it received of each run).
 */
import { randomBytes } from "node:crypto";
import type { TestProject } from "vitest/node";
import { unstable_startWorker } from "wrangler";

export default async function setup(project: TestProject) {
  const adminSecret = randomBytes(16).toString("hex");
  const target = await unstable_startWorker({
    config: "workers/target/wrangler.toml",
    bindings: { ADMIN_API_SECRET: { type: "plain_text", value: adminSecret } },
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "warn" },
  });
  await target.ready;
  const url = await target.url;
  await (await target.fetch(new URL("/healthz", url).href)).text();
  project.provide("targetUrl", url.origin);
  project.provide("targetAdminSecret", adminSecret);
  return async () => {
    await target.dispose();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    targetUrl: string;
    targetAdminSecret: string;
  }
}
