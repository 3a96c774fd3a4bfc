/**
 * The aggregator's intake batch: flushes wait together and are taken in as one, each
 * answered after; a tick takes in what is held at once; a take-in that throws answers every
 * flush of it with the error (nothing acknowledged), and the next batch starts afresh.
 */
import { describe, expect, it } from "vitest";
import { IntakeBatch, INTAKE_HOLD_MS } from "./intake-batch.ts";

/** A sleep the test releases by hand, to see what is held meanwhile. */
function manualSleep() {
  const waiting: Array<{ ms: number; wake: () => void }> = [];
  return {
    sleep: (ms: number) => new Promise<void>((wake) => waiting.push({ ms, wake })),
    wakeAll: async () => {
      for (const w of waiting.splice(0)) w.wake();
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
    waiting,
  };
}

describe("IntakeBatch", () => {
  it("holds flushes until its timer, then takes them in together and answers each", async () => {
    const batches: number[][] = [];
    const clock = manualSleep();
    const intake = new IntakeBatch<number, string>((items) => (batches.push([...items]), items.map((i) => `ack ${i}`)), clock.sleep);
    const answers = [intake.add(1), intake.add(2), intake.add(3)];
    expect(clock.waiting.map((w) => w.ms)).toEqual([INTAKE_HOLD_MS]); // one timer for the batch
    expect(batches).toEqual([]);
    expect(intake.heldCount).toBe(3);
    await clock.wakeAll();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(await Promise.all(answers)).toEqual(["ack 1", "ack 2", "ack 3"]);
    // The next flush starts a new batch with a timer of its own.
    const fourth = intake.add(4);
    expect(clock.waiting).toHaveLength(1);
    await clock.wakeAll();
    expect(await fourth).toBe("ack 4");
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it("a tick takes in what is held at once, and the timer then finds nothing", async () => {
    const batches: number[][] = [];
    const clock = manualSleep();
    const intake = new IntakeBatch<number, number>((items) => (batches.push([...items]), items.map((i) => i * 10)), clock.sleep);
    const answer = intake.add(7);
    intake.takeNow();
    expect(await answer).toBe(70);
    await clock.wakeAll();
    expect(batches).toEqual([[7]]);
    intake.takeNow(); // nothing held: nothing taken in
    expect(batches).toEqual([[7]]);
  });

  it("a take-in that throws answers each flush of its batch with the error; the next batch is taken in", async () => {
    const clock = manualSleep();
    let fail = true;
    const intake = new IntakeBatch<number, number>((items) => {
      if (fail) throw new Error("storage refused the row");
      return items.map((i) => i);
    }, clock.sleep);
    const refused = [intake.add(1), intake.add(2)].map((answer) => expect(answer).rejects.toThrow("storage refused the row"));
    await clock.wakeAll();
    await Promise.all(refused);
    fail = false;
    const retried = intake.add(1);
    await clock.wakeAll();
    expect(await retried).toBe(1);
  });
});
