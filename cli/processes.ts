/**
 * Linux process accounting from /proc: which workerd processes the local stack started,
 * and how much CPU a process has used. The benchmark uses it to charge the generator
 * (the coordinator's workerd, which runs every shard) and k6 with their own CPU time.
 */
import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_S = 100; // USER_HZ on Linux

interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly ppid: number;
  readonly cpuTicks: number;
  readonly childCpuTicks: number;
}

function readStat(pid: number | "self"): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm may contain spaces: it is the text between the first "(" and the last ")".
    const open = text.indexOf("(");
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    return {
      pid: Number(text.slice(0, open).trim()),
      comm: text.slice(open + 1, close),
      ppid: Number(fields[1]),
      cpuTicks: Number(fields[11]) + Number(fields[12]), // utime + stime
      childCpuTicks: Number(fields[13]) + Number(fields[14]), // cutime + cstime (reaped children)
    };
  } catch {
    return null;
  }
}

/** Pids of workerd processes descending from this process. */
export function workerdDescendants(root = process.pid): number[] {
  if (process.platform !== "linux") return [];
  const stats = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readStat(Number(d)))
    .filter((s): s is ProcStat => s !== null);
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const descends = (s: ProcStat): boolean => {
    for (let p = s.ppid, hops = 0; p > 1 && hops < 16; hops++) {
      if (p === root) return true;
      p = byPid.get(p)?.ppid ?? 0;
    }
    return false;
  };
  return stats.filter((s) => s.comm.startsWith("workerd") && descends(s)).map((s) => s.pid);
}

/** CPU seconds (user + system) used so far by the given live processes. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.cpuTicks ?? 0), 0) / CLOCK_TICKS_PER_S;
}

/** CPU seconds of this process's reaped children (a finished k6 run lands here). */
export function reapedChildrenCpuSeconds(): number {
  return (readStat("self")?.childCpuTicks ?? 0) / CLOCK_TICKS_PER_S;
}

/** Resident memory (bytes) of the given live processes, from /proc/<pid>/status VmRSS. */
export function residentBytes(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // the process ended: it holds no memory
    }
  }
  return total;
}
