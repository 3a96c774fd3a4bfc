/**
 * The smallest WebSocket server the corpus scripts need (RFC 6455): the opening handshake
 * (§4.2.2: Sec-WebSocket-Accept is the base64 SHA-1 of the key and the protocol's GUID),
 * masked client frames read (§5.2, payload lengths of 7, 16 and 64 bits), unmasked server
 * frames written, ping answered with pong (§5.5.2) and close echoed (§5.5.1). Two rooms on
 * top: an echo (`/echo`, what echo.websocket.org does) and a chat (`/ws`, what QuickPizza's
 * does: every message goes to every other connection). Written here because the `ws`
 * package is only a transitive dependency, without types.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const OPCODE = { text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

export interface WebSocketPeer {
  send(opcode: number, payload: Buffer): void;
  /** Sends a close frame with `code` (RFC 6455 §7.4; 1000 when not given) and ends the connection. */
  close(code?: number): void;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x80 | opcode, length])
      : length < 65536
        ? Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigEndian64(length)]);
  return Buffer.concat([header, payload]);
}

function bigEndian64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** Whole frames at the head of `buffer`, and what is left of it. */
function readFrames(buffer: Buffer): { frames: { opcode: number; payload: Buffer }[]; rest: Buffer } {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let at = 0;
  while (buffer.length - at >= 2) {
    const opcode = buffer.readUInt8(at) & 0x0f;
    const masked = (buffer.readUInt8(at + 1) & 0x80) !== 0;
    let length = buffer.readUInt8(at + 1) & 0x7f;
    let offset = at + 2;
    if (length === 126) {
      if (buffer.length < offset + 2) break;
      length = buffer.readUInt16BE(offset);
      offset += 2;
    } else if (length === 127) {
      if (buffer.length < offset + 8) break;
      length = Number(buffer.readBigUInt64BE(offset));
      offset += 8;
    }
    const maskAt = offset;
    if (masked) offset += 4;
    if (buffer.length < offset + length) break;
    const payload = Buffer.from(buffer.subarray(offset, offset + length));
    if (masked) for (let i = 0; i < payload.length; i++) payload.writeUInt8(payload.readUInt8(i) ^ buffer.readUInt8(maskAt + (i % 4)), i);
    frames.push({ opcode, payload });
    at = offset + length;
  }
  return { frames, rest: buffer.subarray(at) };
}

/**
 * Accepts the upgrade on `socket` and calls `onMessage` for each text or binary message.
 * Control frames are answered here.
 */
export function acceptWebSocket(
  request: IncomingMessage,
  socket: Duplex,
  onMessage: (peer: WebSocketPeer, opcode: number, payload: Buffer) => void,
  onClose: (peer: WebSocketPeer) => void = () => {},
): WebSocketPeer | null {
  const key = request.headers["sec-websocket-key"];
  if (typeof key !== "string") {
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    return null;
  }
  const accept = createHash("sha1")
    .update(key + GUID)
    .digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let open = true;
  const peer: WebSocketPeer = {
    send: (opcode, payload) => {
      if (open) socket.write(frame(opcode, payload));
    },
    close: (code = 1000) => {
      if (!open) return;
      socket.write(frame(OPCODE.close, Buffer.from([code >> 8, code & 0xff])));
      open = false;
      socket.end();
    },
  };
  let pending: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    const { frames, rest } = readFrames(Buffer.concat([pending, chunk]));
    pending = rest;
    for (const { opcode, payload } of frames) {
      if (opcode === OPCODE.ping) peer.send(OPCODE.pong, payload);
      else if (opcode === OPCODE.close) {
        peer.send(OPCODE.close, payload.subarray(0, 2));
        open = false;
        socket.end();
      } else if (opcode === OPCODE.text || opcode === OPCODE.binary) onMessage(peer, opcode, payload);
    }
  });
  const closed = () => {
    open = false;
    onClose(peer);
  };
  socket.on("close", closed);
  socket.on("error", closed);
  return peer;
}
