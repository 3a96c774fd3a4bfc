/**
 * FNV-1a, 32 bits: a stable hash of a string, the same in every isolate. Authrim routes its
 * sharded state with it (ar-lib-core `fnv1a32`), and so do the local target's shards and the
 * comparison's per-region seeds.
 */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
