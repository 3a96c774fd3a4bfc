// The part of node:crypto k6-compat/runtime/crypto.ts uses, for the Workers type check
// (workerd provides the module under nodejs_compat; Node's own types cover it elsewhere).
declare module "node:crypto" {
  interface SyncHash {
    update(data: Uint8Array): SyncHash;
    digest(): Uint8Array;
  }
  export function createHash(algorithm: string): SyncHash;
  export function createHmac(algorithm: string, key: Uint8Array): SyncHash;
  export function getRandomValues<T extends ArrayBufferView>(array: T): T;
}
