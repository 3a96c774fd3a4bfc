import { describe, expect, it } from "vitest";
import { ITERATIONS_PER_SCRIPT_SESSION } from "../../core/schedule/shard-assignment.ts";
import { ScriptSessions } from "./script-sessions.ts";

/** Sessions as the script's isolate would open them: numbered, with what was run on each and whether it was ended. */
function isolate() {
  const opened: Array<{ id: number; iterations: number; disposed: boolean }> = [];
  const open = async () => {
    const record = { id: opened.length, iterations: 0, disposed: false };
    opened.push(record);
    return {
      run: async () => {
        record.iterations++;
        return record.id;
      },
      [Symbol.dispose]: () => void (record.disposed = true),
    };
  };
  return { opened, open };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("script sessions", () => {
  it("runs a thousand iterations on each session, so a run opens one per thousand", async () => {
    const { opened, open } = isolate();
    const sessions = new ScriptSessions(open);
    for (let i = 0; i < 2_500; i++) await sessions.use((s) => s.run());
    await settle();
    expect(ITERATIONS_PER_SCRIPT_SESSION).toBe(1_000);
    expect(opened.map((s) => s.iterations)).toEqual([1_000, 1_000, 500]);
    // The two left behind are ended; the current one stays open for the next iteration.
    expect(opened.map((s) => s.disposed)).toEqual([true, true, false]);
  });

  it("keeps a session left behind open until its last iteration ends", async () => {
    const { opened, open } = isolate();
    const sessions = new ScriptSessions(open, 2);
    let release!: () => void;
    const held = sessions.use(async (s) => {
      await new Promise<void>((resolve) => (release = resolve));
      return s.run();
    });
    await sessions.use((s) => s.run());
    await sessions.use((s) => s.run()); // the third iteration opens the second session
    await settle();
    expect(opened.map((s) => s.disposed)).toEqual([false, false]);
    release();
    expect(await held).toBe(0);
    await settle();
    expect(opened.map((s) => s.disposed)).toEqual([true, false]);
  });

  it("opens a new session once a call on the current one failed (its isolate gone)", async () => {
    const { opened, open } = isolate();
    const sessions = new ScriptSessions(open);
    await sessions.use((s) => s.run());
    await expect(
      sessions.use(async () => {
        throw new Error("Network connection lost.");
      }),
    ).rejects.toThrow("Network connection lost.");
    expect(await sessions.use((s) => s.run())).toBe(1);
    await settle();
    expect(opened.map((s) => [s.iterations, s.disposed])).toEqual([
      [1, true],
      [1, false],
    ]);
  });

  it("tries again after a session that could not be opened", async () => {
    let attempts = 0;
    const sessions = new ScriptSessions(async () => {
      if (attempts++ === 0) throw new Error("the isolate failed to start");
      return { run: async () => "ran" };
    });
    await expect(sessions.use((s) => s.run())).rejects.toThrow("the isolate failed to start");
    expect(await sessions.use((s) => s.run())).toBe("ran");
    expect(attempts).toBe(2);
  });
});
