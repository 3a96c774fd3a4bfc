/**
 * Reading a response the way the shard times it: a body nobody reads is still read to its
 * end (its time is part of the request's, as in k6) without being kept, and a failed fetch
 * is told apart as a timeout or a connection error.
 */

/** Bodies up to this size (by content-length) are read in one piece; longer ones are drained. */
const WHOLE_BODY_MAX_BYTES = 1 << 20;

/**
 * The size of a body nobody reads, read to its end (the request's time includes it, as in
 * k6) while keeping none of it: a 50 MB answer costs one chunk of memory, not 50 MB per
 * request in flight. Small bodies with a known length are read whole, which is cheaper.
 */
export async function bodyBytes(response: Response): Promise<number> {
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (!response.body) return 0;
  if (length <= WHOLE_BODY_MAX_BYTES) return (await response.arrayBuffer()).byteLength;
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}

/** Whether a failed fetch was cut by its timeout (or an abort) rather than the connection. */
export function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}
