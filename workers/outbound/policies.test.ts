/**
 * The ownership check's policy, applied by the outbound module: it reads the one origin it
 * was made for, and a redirect anywhere else is not sent.
 */
import { describe, expect, it } from "vitest";
import { OutboundRefused, outboundFetch } from "./outbound-fetch.ts";
import { ownershipCheckPolicy, targetPolicy } from "./policies.ts";

const WELL_KNOWN = "https://api.example.com/.well-known/edgeload-verification";

/** A fake network answering from a table, recording what was sent. */
function network(routes: Record<string, { status: number; location?: string }>) {
  const sent: string[] = [];
  const fetcher = (async (url: string) => {
    sent.push(url);
    const route = routes[url] ?? { status: 404 };
    return new Response("edgeload-verification=x", { status: route.status, headers: route.location ? { location: route.location } : {} });
  }) as unknown as typeof fetch;
  return { fetcher, sent };
}

describe("ownershipCheckPolicy", () => {
  it("allows the URL's own origin and nothing else", () => {
    const policy = ownershipCheckPolicy(WELL_KNOWN);
    expect(policy(new URL(WELL_KNOWN))).toBeNull();
    expect(policy(new URL("http://api.example.com/.well-known/edgeload-verification"))).toBe("an ownership check reads only https://api.example.com");
    expect(policy(new URL("https://evil.example/"))).toBe("an ownership check reads only https://api.example.com");
  });

  it("does not follow a redirect to another host (a metadata address here)", async () => {
    const net = network({ [WELL_KNOWN]: { status: 302, location: "http://169.254.169.254/latest/meta-data/" } });
    await expect(outboundFetch(ownershipCheckPolicy(WELL_KNOWN), net.fetcher)(WELL_KNOWN)).rejects.toThrow(OutboundRefused);
    expect(net.sent).toEqual([WELL_KNOWN]);
  });

  it("follows a redirect within the host's origin: its owner's choice", async () => {
    const moved = "https://api.example.com/.well-known/edgeload-verification.txt";
    const net = network({ [WELL_KNOWN]: { status: 301, location: moved }, [moved]: { status: 200 } });
    const response = await outboundFetch(ownershipCheckPolicy(WELL_KNOWN), net.fetcher)(WELL_KNOWN);
    expect(response.status).toBe(200);
    expect(net.sent).toEqual([WELL_KNOWN, moved]);
  });
});

describe("targetPolicy with the hosts proved at admission", () => {
  const env = { ALLOWED_TARGETS: "a.example.com,b.example.com", EDGELOAD_MODE: "deployed" };

  it("refuses an allowed host whose owner never proved control, and names how to prove it", async () => {
    const policy = targetPolicy(env, ["a.example.com"]);
    expect(policy(new URL("https://a.example.com/x"))).toBeNull();
    expect(policy(new URL("https://b.example.com/x"))).toBe(
      "b.example.com has no proof of ownership for this deployment (`edgeload verify b.example.com` says what to publish)",
    );
    // A redirect from the proved host to the unproved one is not sent.
    const { fetcher, sent } = network({ "https://a.example.com/": { status: 302, location: "https://b.example.com/" } });
    await expect(outboundFetch(policy, fetcher)("https://a.example.com/")).rejects.toBeInstanceOf(OutboundRefused);
    expect(sent).toEqual(["https://a.example.com/"]);
  });

  it("checks nothing more for a run admitted without the check, or with it off", () => {
    expect(targetPolicy(env)(new URL("https://b.example.com/"))).toBeNull();
    expect(targetPolicy({ ...env, TARGET_VERIFICATION: "off" }, [])(new URL("https://b.example.com/"))).toBeNull();
    // Loopback needs no proof unless TARGET_VERIFICATION=all.
    const local = { ALLOWED_TARGETS: "", EDGELOAD_MODE: "local" };
    expect(targetPolicy(local, [])(new URL("http://127.0.0.1:8787/"))).toBeNull();
    expect(targetPolicy({ ...local, TARGET_VERIFICATION: "all" }, [])(new URL("http://127.0.0.1:8787/"))).toMatch(/^127\.0\.0\.1 has no proof/);
  });

  it("refuses everything while the setting is not one it knows", () => {
    expect(targetPolicy({ ...env, TARGET_VERIFICATION: "sometimes" }, ["a.example.com"])(new URL("https://a.example.com/"))).toMatch(
      /TARGET_VERIFICATION is "sometimes"/,
    );
  });
});
