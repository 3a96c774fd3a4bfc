/**
 * Starts the real target Worker (workers/target) on a loopback port for the workers tests,
 * through wrangler's startWorker API, and hands its URL to the test pool.
 */
import type { TestProject } from "vitest/node";
import { unstable_startWorker } from "wrangler";

export default async function setup(project: TestProject) {
  const target = await unstable_startWorker({
    config: "workers/target/wrangler.toml",
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "warn" },
  });
  await target.ready;
  const url = await target.url;
  await (await target.fetch(new URL("/healthz", url).href)).text();
  project.provide("targetUrl", url.origin);
  return async () => {
    await target.dispose();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    targetUrl: string;
  }
}
