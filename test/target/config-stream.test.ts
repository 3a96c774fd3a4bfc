/**
 * Config streaming under /app/config (workers/target/config-app.ts, config-hub.ts) inside
 * workerd: the first event of a stream is the whole config, a PUT reaches every open
 * stream, heartbeats and ticks arrive on time, and the admin bearer guards writes. The
 * hub is one Durable Object for the whole file, so tests compare versions, not constants.
 */
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { sseComment, sseEvent } from "../../workers/target/sse.ts";

const ADMIN = "admin-test-secret";

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(`http://target.test${path}`, init));
}

const putConfig = (key: string, body: unknown, token: string | null = ADMIN) =>
  call(`/app/config/${key}`, { method: "PUT", body: JSON.stringify(body), headers: token === null ? {} : { authorization: `Bearer ${token}` } });

/** One parsed block of a text/event-stream: an event's fields, or a comment. */
interface Block {
  readonly event?: string;
  readonly id?: string;
  readonly data?: string;
  readonly comment?: string;
}

/** Reads a text/event-stream block by block (blocks end with a blank line). */
class EventReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";
  /** A read that outlived `during()`'s deadline: the next call takes its block. */
  #pending: Promise<Block> | null = null;

  constructor(response: Response) {
    this.#reader = response.body!.getReader();
  }

  next(): Promise<Block> {
    const pending = this.#pending ?? this.#read();
    this.#pending = null;
    return pending;
  }

  async #read(): Promise<Block> {
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        return parseBlock(block);
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error("the stream ended");
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  /** The next event that is not a comment. */
  async nextEvent(): Promise<Block> {
    for (;;) {
      const block = await this.next();
      if (block.comment === undefined) return block;
    }
  }

  /** Every block that arrives within `ms`. */
  async during(ms: number): Promise<Block[]> {
    const blocks: Block[] = [];
    const deadline = new Promise<"deadline">((resolve) => setTimeout(() => resolve("deadline"), ms));
    for (;;) {
      const read = this.next();
      const next = await Promise.race([read, deadline]);
      if (next === "deadline") {
        this.#pending = read;
        read.catch(() => {}); // cancelled with the stream after the test
        return blocks;
      }
      blocks.push(next);
    }
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

function parseBlock(block: string): Block {
  if (block.startsWith(":")) return { comment: block.slice(1).trim() };
  const fields: Record<string, string> = {};
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
  }
  return fields;
}

const open: EventReader[] = [];
async function openStream(query = ""): Promise<{ response: Response; events: EventReader }> {
  const response = await call(`/app/config/stream${query}`, { headers: { accept: "text/event-stream" } });
  const events = new EventReader(response);
  open.push(events);
  return { response, events };
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((events) => events.cancel().catch(() => {})));
});

describe("GET /app/config/stream", () => {
  it("answers text/event-stream, not cached, with the whole config as the first event", async () => {
    const written = await (await putConfig("feature.checkout", { value: { enabled: true } })).json<{ version: number }>();
    const { response, events } = await openStream();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const first = await events.next();
    expect(first.event).toBe("config");
    expect(Number(first.id)).toBeGreaterThanOrEqual(written.version);
    const config = JSON.parse(first.data!) as { version: number; values: Record<string, unknown> };
    expect(config.version).toBe(Number(first.id));
    expect(config.values["feature.checkout"]).toEqual({ enabled: true });
    // The same as GET /app/config answers.
    expect(await (await call("/app/config")).json()).toEqual(config);
  });

  it("pushes a change written by PUT to every open stream, with the new version as its id", async () => {
    const a = await openStream();
    const b = await openStream();
    const [firstA, firstB] = await Promise.all([a.events.next(), b.events.next()]);
    expect(firstA.id).toBe(firstB.id);

    const put = await putConfig("rate.limit", { value: 250 });
    expect(put.status).toBe(200);
    const { version, key } = await put.json<{ version: number; key: string }>();
    expect([key, version]).toEqual(["rate.limit", Number(firstA.id) + 1]);

    for (const events of [a.events, b.events]) {
      const change = await events.nextEvent();
      expect(change.event).toBe("change");
      expect(change.id).toBe(String(version));
      expect(JSON.parse(change.data!)).toEqual({ version, key: "rate.limit", value: 250 });
    }
    expect(((await (await call("/app/config")).json()) as { values: Record<string, unknown> }).values["rate.limit"]).toBe(250);
  });

  it("writes a `: ping` comment every heartbeat and numbered tick events every interval", async () => {
    const { events } = await openStream("?heartbeat=100&interval=40");
    expect((await events.next()).event).toBe("config");
    const blocks = await events.during(450);
    const pings = blocks.filter((b) => b.comment === "ping");
    const ticks = blocks.filter((b) => b.event === "tick").map((b) => JSON.parse(b.data!) as { n: number; version: number });
    expect(pings.length).toBeGreaterThanOrEqual(3); // ~4 expected in 450 ms
    expect(ticks.length).toBeGreaterThanOrEqual(6); // ~11 expected
    expect(ticks.map((t) => t.n)).toEqual(ticks.map((_, i) => i + 1)); // numbered from 1, none lost
  });

  it("without ticks, sends nothing but heartbeats between changes", async () => {
    const { events } = await openStream("?heartbeat=100");
    await events.next();
    const blocks = await events.during(250);
    expect(blocks.length).toBeGreaterThanOrEqual(1);
    expect(blocks.every((b) => b.comment === "ping")).toBe(true);
  });

  it("delays the response headers by ?ms= (the time to open)", async () => {
    const startedMs = Date.now();
    const { response, events } = await openStream("?ms=200");
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(190);
    expect(response.status).toBe(200);
    expect((await events.next()).event).toBe("config");
  });

  it("answers 406 without Accept: text/event-stream, and 400 naming a bad knob", async () => {
    expect((await call("/app/config/stream")).status).toBe(406);
    expect((await call("/app/config/stream", { headers: { accept: "application/json" } })).status).toBe(406);
    expect((await call("/app/config/stream", { headers: { accept: "text/event-stream;q=0, */*" } })).status).toBe(406);
    const bad = await call("/app/config/stream?heartbeat=50&interval=x", { headers: { accept: "text/event-stream" } });
    expect(bad.status).toBe(400);
    const { problems } = await bad.json<{ problems: string[] }>();
    expect(problems).toEqual([expect.stringMatching(/^heartbeat:/), expect.stringMatching(/^interval:/)]);
  });
});

describe("PUT /app/config/:key", () => {
  it("needs the admin bearer: 401 without it or with another token, and nothing changes", async () => {
    const before = await (await call("/app/config")).json<{ version: number }>();
    expect((await putConfig("x", { value: 1 }, null)).status).toBe(401);
    expect((await putConfig("x", { value: 1 }, "not-the-secret")).status).toBe(401);
    expect(await (await call("/app/config")).json()).toEqual(before);
  });

  it("answers 400 naming a bad key and a body without value", async () => {
    const res = await putConfig("bad%20key", { other: 1 });
    expect(res.status).toBe(400);
    const { problems } = await res.json<{ problems: string[] }>();
    expect(problems).toEqual([expect.stringMatching(/^key:/), expect.stringMatching(/^body:/)]);
  });

  it("stores any JSON value, null included, and bumps the version by one per write", async () => {
    const first = await (await putConfig("any", { value: [1, "two", { three: null }] })).json<{ version: number }>();
    const second = await (await putConfig("any", { value: null })).json<{ version: number }>();
    expect(second.version).toBe(first.version + 1);
    const config = await (await call("/app/config")).json<{ version: number; values: Record<string, unknown> }>();
    expect(config.version).toBe(second.version);
    expect(config.values).toHaveProperty("any", null);
  });
});

describe("SSE framing (workers/target/sse.ts)", () => {
  it.each([
    // a typed event with an id: one line per field, a blank line at the end
    [{ event: "config", id: 3, data: '{"v":1}' }, 'event: config\nid: 3\ndata: {"v":1}\n\n'],
    // no type, no id: only data (clients default the type to "message")
    [{ data: "x" }, "data: x\n\n"],
    // data with line breaks: one data field per line, joined again by the client
    [{ data: "a\nb\r\nc" }, "data: a\ndata: b\ndata: c\n\n"],
    // a line break in the type would start a new field: it becomes a space
    [{ event: "a\nb", data: "" }, "event: a b\ndata: \n\n"],
  ])("%j → %j", (event, text) => {
    expect(sseEvent(event)).toBe(text);
  });

  it("frames a comment as a line starting with a colon", () => {
    expect(sseComment("ping")).toBe(": ping\n\n");
  });
});
