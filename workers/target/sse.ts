/**
 * Server-Sent Events framing: the `text/event-stream` format of the WHATWG HTML standard
 * (§9.2 "Server-sent events"). An event is a block of `field: value` lines ended by a blank
 * line; a line starting with a colon is a comment, which clients ignore and proxies see as
 * traffic (hence heartbeats). Pure: no I/O, no clock.
 *
 * @example
 * sseEvent({ event: "config", id: 3, data: '{"version":3}' })
 * // "event: config\nid: 3\ndata: {\"version\":3}\n\n"
 */

export interface SseEvent {
  /** The event type (`event:`); absent means the client's default, "message". */
  readonly event?: string;
  /** The last-event id (`id:`); absent leaves the client's last id as it was. */
  readonly id?: string | number;
  readonly data: string;
}

/** One event. Data with line breaks becomes one `data:` line per line, as the format requires. */
export function sseEvent({ event, id, data }: SseEvent): string {
  let text = "";
  if (event !== undefined) text += `event: ${oneLine(event)}\n`;
  if (id !== undefined) text += `id: ${oneLine(String(id))}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** A comment line (`: text`), e.g. a heartbeat that keeps idle connections from timing out. */
export function sseComment(text: string): string {
  return `: ${oneLine(text)}\n\n`;
}

/** Field values other than data cannot span lines: a break would start a new field. */
function oneLine(value: string): string {
  return value.replace(/[\r\n]/g, " ");
}
