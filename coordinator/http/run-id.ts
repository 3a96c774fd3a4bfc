/** Run ids: `r-<ms base36>-<8 hex>`, sortable by creation time. */
export const RUN_ID = /^r-[0-9a-z]{6,12}-[0-9a-f]{8}$/;

export function newRunId(): string {
  return `r-${Date.now().toString(36)}-${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`;
}
