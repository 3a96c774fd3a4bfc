/**
 * `http.file()` and multipart forms (runtime/multipart.ts), against the bytes Go's
 * mime/multipart writer gives for the same parts (k6 v1.8.1 builds its body with it), and
 * read back by a real multipart parser (the platform's `Request.formData()`).
 */
import { describe, expect, it } from "vitest";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { K6_USER_AGENT, k6Request } from "./runtime/k6-request.ts";
import { FileData, holdsFile, httpFile, multipartBody } from "./runtime/multipart.ts";

const BOUNDARY = "0123456789abcdef".repeat(4).slice(0, 60);

describe("http.file", () => {
  it("takes k6's defaults: the time in nanoseconds as the filename, application/octet-stream", () => {
    const file = httpFile("abc", undefined, undefined, 1_700_000_000_123);
    expect(file).toEqual(new FileData("abc", "1700000000123000000", "application/octet-stream"));
    expect(httpFile(new ArrayBuffer(2), "a.bin", "image/png")).toMatchObject({ filename: "a.bin", content_type: "image/png" });
  });

  it("refuses what k6 refuses, naming the type", () => {
    expect(() => httpFile(new Uint8Array(2))).toThrow("http.file: invalid type Uint8Array, expected string or ArrayBuffer");
    expect(() => httpFile(42)).toThrow("invalid type number");
  });
});

describe("multipartBody", () => {
  it("writes Go's multipart bytes: file parts with filename and type, plain fields, the closing boundary", () => {
    const form = { name: "x", file: httpFile("hello", 'a"b.txt', "text/plain") };
    const { body, contentType } = multipartBody(form, BOUNDARY);
    expect(contentType).toBe(`multipart/form-data; boundary=${BOUNDARY}`);
    expect(new TextDecoder().decode(body)).toBe(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a\\"b.txt"\r\nContent-Type: text/plain\r\n\r\nhello` +
        `\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nx` +
        `\r\n--${BOUNDARY}--\r\n`,
    );
  });

  it("is read back by a multipart parser with every field, file name, type and byte", async () => {
    const bytes = new Uint8Array([0, 255, 13, 10, 45, 45]);
    const { body, contentType } = multipartBody({ upload: httpFile(bytes.buffer, "blob.bin"), note: 7, nothing: null });
    const form = await new Request("http://127.0.0.1/", { method: "POST", body, headers: { "content-type": contentType } }).formData();
    const upload = form.get("upload") as File;
    expect(upload.name).toBe("blob.bin");
    expect(upload.type).toBe("application/octet-stream");
    expect(new Uint8Array(await upload.arrayBuffer())).toEqual(bytes);
    expect(form.get("note")).toBe("7");
    expect(form.get("nothing")).toBe("");
  });

  it("draws a new 60-hex-digit boundary for each body, as Go's writer does", () => {
    const a = multipartBody({ f: httpFile("x", "f") }).contentType;
    const b = multipartBody({ f: httpFile("x", "f") }).contentType;
    expect(a).toMatch(/^multipart\/form-data; boundary=[0-9a-f]{60}$/);
    expect(a).not.toBe(b);
  });
});

describe("a k6 request with a file in its form", () => {
  it("goes as multipart with its Content-Type; a form without one stays urlencoded", () => {
    const base = { method: "POST", url: "http://127.0.0.1/upload", jar: new CookieJar(), userAgent: K6_USER_AGENT };
    const withFile = k6Request({ ...base, body: { a: "1", f: httpFile("data", "f.txt") } }, "http.post");
    expect(withFile.headers["Content-Type"]).toMatch(/^multipart\/form-data; boundary=[0-9a-f]{60}$/);
    expect(new TextDecoder().decode(withFile.body)).toContain('name="f"; filename="f.txt"\r\nContent-Type: application/octet-stream\r\n\r\ndata');
    expect(holdsFile({ a: "1" })).toBe(false);
    const plain = k6Request({ ...base, body: { a: "1" } }, "http.post");
    expect(plain.headers["Content-Type"]).toBe("application/x-www-form-urlencoded");
  });
});
