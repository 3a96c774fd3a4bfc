/**
 * k6's `http.file()` and the multipart body it makes of a form that holds one, built as k6
 * v1.8.1 builds it (js/modules/k6/http/request.go and file.go over Go's mime/multipart): a
 * file field is a part with its filename and content type, every other field a plain form
 * field, a random 60-hex-digit boundary, and `multipart/form-data; boundary=…` as the
 * request's Content-Type. Go walks the form's map in a random order; the fields go here in
 * the order of their names, one of the orders k6 may send.
 */

/** What `http.file()` returns; its fields are named as k6 exposes them to a script. */
export class FileData {
  readonly data: string | ArrayBuffer;
  readonly filename: string;
  readonly content_type: string;
  constructor(data: string | ArrayBuffer, filename: string, contentType: string) {
    this.data = data;
    this.filename = filename;
    this.content_type = contentType;
  }
}

/** `http.file(data, filename?, contentType?)`; the default filename is the time in nanoseconds, as k6's. */
export function httpFile(data: unknown, filename?: string, contentType?: string, nowMs: number = Date.now()): FileData {
  if (typeof data !== "string" && !(data instanceof ArrayBuffer)) {
    const kind = data === null ? "null" : ArrayBuffer.isView(data) ? data.constructor.name : typeof data;
    throw new TypeError(`http.file: invalid type ${kind}, expected string or ArrayBuffer`);
  }
  return new FileData(data, filename ?? `${BigInt(Math.round(nowMs)) * 1_000_000n}`, contentType ?? "application/octet-stream");
}

/** Whether a form must go as multipart: k6 switches when any field is a file. */
export function holdsFile(form: Record<string, unknown>): boolean {
  return Object.values(form).some((value) => value instanceof FileData);
}

/** Go's mime/multipart quoting of a name inside `name="…"`. */
function escapeQuotes(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}

/** A field's text as k6 writes it into a form (formatFormVal): nothing for null, nested values empty. */
function fieldText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return "";
  return String(value);
}

/** The multipart body of a form holding a file, and its Content-Type; `boundary` is Go's random 30 bytes in hex. */
export function multipartBody(form: Record<string, unknown>, boundary: string = randomBoundary()): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  Object.keys(form)
    .sort()
    .forEach((name, i) => {
      const value = form[name];
      // Go's writer: "--b" before the first part, "\r\n--b" before each next; headers sorted by name.
      const head =
        value instanceof FileData
          ? `Content-Disposition: form-data; name="${name}"; filename="${escapeQuotes(value.filename)}"\r\nContent-Type: ${value.content_type}\r\n`
          : `Content-Disposition: form-data; name="${escapeQuotes(name)}"\r\n`;
      chunks.push(encoder.encode(`${i === 0 ? "" : "\r\n"}--${boundary}\r\n${head}\r\n`));
      const data = value instanceof FileData ? value.data : fieldText(value);
      chunks.push(typeof data === "string" ? encoder.encode(data) : new Uint8Array(data));
    });
  chunks.push(encoder.encode(`\r\n--${boundary}--\r\n`));
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function randomBoundary(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(30));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
