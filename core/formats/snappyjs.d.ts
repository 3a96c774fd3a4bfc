/** snappyjs ships no types: the two functions edgeload uses (block format, as remote-write wants). */
declare module "snappyjs" {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array): Uint8Array;
}
