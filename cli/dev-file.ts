/**
 * `.edgeload/dev.json`: where `edgeload dev` records the running local stack (URLs and
 * API token) so other commands find it without flags. Kept apart from local-stack.ts so
 * that reading it does not load wrangler.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PROJECT_ROOT } from "./paths.ts";

export const DEV_FILE = join(PROJECT_ROOT, ".edgeload", "dev.json");

/** The load-test client registered on the local target at start. */
export interface TargetClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
}

export interface DevFile {
  readonly apiUrl: string;
  readonly targetUrl: string;
  /** The same target through wrangler's dev proxy (absent in files of older versions). */
  readonly targetProxyUrl?: string;
  /** The local target's ADMIN_API_SECRET (for seeders). */
  readonly targetAdminSecret: string;
  /** The load-test client registered on the local target at start. */
  readonly targetClient: TargetClient;
  readonly token: string;
  readonly pid: number;
  readonly startedAt: string;
}

/** The running local stack recorded by `edgeload dev`, if its process is alive. */
export async function readDevFile(): Promise<DevFile | null> {
  try {
    const file = JSON.parse(await readFile(DEV_FILE, "utf8")) as DevFile;
    process.kill(file.pid, 0); // throws when the process is gone
    return file;
  } catch {
    return null;
  }
}
