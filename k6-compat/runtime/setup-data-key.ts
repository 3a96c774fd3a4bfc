/**
 * Which setup() result an iteration needs, named cheaply: its length and a 32-bit string
 * hash. The shard sends the key with each iteration and the data itself only when the
 * script's isolate does not hold it (workers/shard/script-flow.ts).
 */
export function setupDataKey(json: string): string {
  let h = 0;
  for (let i = 0; i < json.length; i++) h = (Math.imul(h, 31) + json.charCodeAt(i)) | 0;
  return `${json.length}:${(h >>> 0).toString(16)}`;
}
