/**
 * `k6/encoding`: base64 in k6's four alphabets (std, rawstd, url, rawurl). Strings are
 * encoded as UTF-8, as k6 does; `b64decode(s, enc, "s")` gives a string, else an ArrayBuffer.
 */
type Alphabet = "std" | "rawstd" | "url" | "rawurl";

export function b64encode(input: string | ArrayBuffer, encoding: Alphabet = "std"): string {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : new Uint8Array(input);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  let out = btoa(binary);
  if (encoding === "url" || encoding === "rawurl") out = out.replace(/\+/g, "-").replace(/\//g, "_");
  if (encoding === "rawstd" || encoding === "rawurl") out = out.replace(/=+$/, "");
  return out;
}

export function b64decode(input: string, encoding: Alphabet = "std", format?: "s"): string | ArrayBuffer {
  let text = String(input);
  if (encoding === "url" || encoding === "rawurl") text = text.replace(/-/g, "+").replace(/_/g, "/");
  while (text.length % 4 !== 0) text += "=";
  const binary = atob(text);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return format === "s" ? new TextDecoder().decode(bytes) : bytes.buffer;
}
