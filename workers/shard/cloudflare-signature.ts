/**
 * Whether the target is behind Cloudflare: a response carrying Cloudflare's signature
 * (`cf-ray`, `server: cloudflare`) says so, and that the load reached it as Worker
 * subrequests. A target is behind Cloudflare or not, so the first responses of an
 * invocation tell; later ones are not looked at.
 */

/** Responses per invocation checked for Cloudflare's signature. */
const CLOUDFLARE_CHECKS = 16;

export class CloudflareSignature {
  /** Responses looked at so far, and whether one carried the signature. */
  #checks = 0;
  #seen = false;

  /** Whether a response looked at carried the signature. */
  get seen(): boolean {
    return this.#seen;
  }

  /** Looks at a response's headers, while fewer than CLOUDFLARE_CHECKS were. */
  observe(headers: Headers): void {
    if (this.#checks >= CLOUDFLARE_CHECKS) return;
    this.#checks++;
    if (headers.has("cf-ray") || headers.get("server")?.toLowerCase() === "cloudflare") this.#seen = true;
  }
}
