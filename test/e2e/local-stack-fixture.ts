/**
 * One local stack per test file, started exactly as the CLI starts it, with its state in a
 * temporary folder (in memory where the machine has tmpfs) that is removed afterwards. Call at the top of a file; the returned
 * object is filled in before the file's own `beforeAll` hooks run.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll } from "vitest";
import { EdgeloadClient } from "../../cli/client.ts";
import { ephemeralStateDir, startLocalStack, type LocalStack } from "../../cli/local-stack.ts";

export interface StackFixture {
  stack: LocalStack;
  client: EdgeloadClient;
  stateDir: string;
}

export function useLocalStack(prefix: string): StackFixture {
  const fixture = {} as StackFixture;
  beforeAll(async () => {
    fixture.stateDir = await ephemeralStateDir(prefix);
    fixture.stack = await startLocalStack({ persist: fixture.stateDir });
    fixture.client = new EdgeloadClient(fixture.stack.apiUrl, fixture.stack.token);
  });
  afterAll(async () => {
    await fixture.stack?.stop();
    if (fixture.stateDir) await rm(fixture.stateDir, { recursive: true, force: true });
  });
  return fixture;
}
