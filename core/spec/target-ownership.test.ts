/**
 * Proof of target ownership, the pure part: who needs proof, the token, what to publish,
 * reading a resolver's answer and a well-known file, and the judgement with its expiry.
 */
import { describe, expect, it } from "vitest";
import {
  dohQueryUrl,
  findInDohAnswer,
  findInWellKnown,
  judgeFindings,
  notVerifiedDetail,
  ownershipToken,
  parseOwnershipHost,
  parseResolverSetting,
  parseVerificationSetting,
  PROOF_LIFETIME_MS,
  proofToPublish,
  standingOf,
  txtValue,
  verificationRequirement,
  wellKnownOrigin,
  type ProofFinding,
  type VerificationSetting,
} from "./target-ownership.ts";

const TOKEN = "ab".repeat(32);
const PROOF = proofToPublish("api.example.com", TOKEN, "https://api.example.com");
const LINE = `edgeload-verification=${TOKEN}`;
const DAY_MS = 24 * 3600_000;

describe("who needs proof", () => {
  it.each([
    // [TARGET_VERIFICATION, EDGELOAD_MODE, host, required, why]
    [undefined, "deployed", "api.example.com", true, "unset: a deployed coordinator asks proof of a real host"],
    [undefined, "deployed", "127.0.0.1", false, "unset: loopback needs none (a deployed Worker cannot reach it anyway)"],
    [undefined, "local", "api.example.com", false, "unset under wrangler dev: the load leaves from this machine"],
    ["on", "local", "api.example.com", true, "on: asked under wrangler dev too"],
    ["on", "deployed", "localhost", false, "on: loopback still exempt"],
    ["off", "deployed", "api.example.com", false, "off: a single-owner account"],
    ["all", "local", "127.0.0.1", true, "all: loopback too, how the tests exercise the path"],
    ["ALL", "local", "[::1]", true, "the value is read without case"],
  ] as const)("%s in %s mode for %s: required %s (%s)", (raw, mode, host, required, _why) => {
    const setting = parseVerificationSetting(raw);
    if (!setting.ok) throw new Error(setting.detail);
    expect(verificationRequirement(setting.value, mode, host).required).toBe(required);
  });

  it("refuses a value it does not know instead of treating it as off", () => {
    expect(parseVerificationSetting("of")).toEqual({ ok: false, detail: 'TARGET_VERIFICATION is "of"; use on, off or all (or leave it unset)' });
  });

  it("says why in each case, naming the var that changes it", () => {
    const why = (s: VerificationSetting, host: string) => verificationRequirement(s, "deployed", host).why;
    expect(why("off", "a.example")).toContain("TARGET_VERIFICATION=off");
    expect(why("default", "127.0.0.1")).toContain("TARGET_VERIFICATION=all");
  });
});

describe("the host a token is made for", () => {
  it.each([
    // [as given, the form tokens are made for]
    ["API.Example.com", "api.example.com"], // case does not make another host
    ["api.example.com.", "api.example.com"], // nor a trailing dot
    ["127.0.0.1", "127.0.0.1"],
    ["[::1]", "[::1]"],
  ])("%s is %s", (raw, host) => {
    expect(parseOwnershipHost(raw)).toEqual({ ok: true, value: host });
  });

  it.each([
    // [as given, what the refusal says]
    ["", "a host name is required"],
    ["https://api.example.com", "not a bare host name"],
    ["api.example.com/x", "not a bare host name"],
    ["api.example.com:8443", "has a port"],
    ["::1", "IPv6 address goes in brackets"],
    ["bücher.example", "written xn--bcher-kva.example in a URL"],
    ["0x7f.0.0.1", "written 127.0.0.1 in a URL"],
  ])("%j is refused: %s", (raw, message) => {
    const parsed = parseOwnershipHost(raw);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.detail).toContain(message);
  });
});

describe("the token and what to publish", () => {
  it("is the hex HMAC-SHA256 of the label and the host under the deployment key", async () => {
    // Python: hmac.new(b"deployment-key", b"edgeload target v1\napi.example.com", hashlib.sha256).hexdigest()
    const expected = "0a5e534b8d4908dab4c0da45b31a692882422360c166bc7b5553a6e618a4a03c";
    expect(await ownershipToken("deployment-key", "api.example.com")).toBe(expected);
    // Another host, or another deployment's key, gives another token.
    expect(await ownershipToken("deployment-key", "www.example.com")).not.toBe(expected);
    expect(await ownershipToken("other-key", "api.example.com")).not.toBe(expected);
  });

  it("names the TXT record and the well-known URL with the same line", () => {
    expect(PROOF).toEqual({
      host: "api.example.com",
      line: LINE,
      dns: { name: "_edgeload.api.example.com", type: "TXT", value: LINE },
      wellKnown: { url: "https://api.example.com/.well-known/edgeload-verification", line: LINE },
    });
  });

  it.each([
    // [host, target origin, where the well-known file is read]
    ["api.example.com", "http://api.example.com:8080", "https://api.example.com"], // a real host: https, its default port
    ["127.0.0.1", "http://127.0.0.1:9090", "http://127.0.0.1:9090"], // loopback: the target's own origin
    ["127.0.0.1", null, "https://127.0.0.1"], // no target named: https
  ])("%s with target %s is read at %s", (host, origin, expected) => {
    expect(wellKnownOrigin(host, origin)).toBe(expected);
  });

  it("puts the exact record in a refusal, with the last check's reason", () => {
    const record = judgeFindings("api.example.com", [{ method: "dns", found: false, detail: "no TXT record at _edgeload.api.example.com (NXDOMAIN)" }], 0);
    const detail = notVerifiedDetail(PROOF, record);
    expect(detail).toContain(`a DNS TXT record at _edgeload.api.example.com with the value "${LINE}"`);
    expect(detail).toContain(`serve https://api.example.com/.well-known/edgeload-verification with the line ${LINE}`);
    expect(detail).toContain("edgeload verify api.example.com");
    expect(detail).toContain("(last check: no TXT record at _edgeload.api.example.com (NXDOMAIN))");
  });
});

describe("reading a DNS-over-HTTPS answer", () => {
  const txt = (...data: string[]) => ({ Status: 0, Answer: data.map((d) => ({ name: "_edgeload.api.example.com", type: 16, TTL: 300, data: d })) });

  it.each([
    // [resolver's answer, found, detail, why]
    [txt(`"${LINE}"`), true, "TXT record at _edgeload.api.example.com", "the record, quoted as resolvers print it"],
    [txt('"v=spf1 -all"', `"${LINE}"`), true, "TXT record at", "one of several records"],
    [txt(`"edgeload-verification=${TOKEN.slice(0, 40)}" "${TOKEN.slice(40)}"`), true, "TXT record at", "split into two strings"],
    [{ Status: 3 }, false, "no TXT record at _edgeload.api.example.com (NXDOMAIN)", "the name does not exist"],
    [{ Status: 2 }, false, "the resolver answered SERVFAIL", "the resolver could not answer"],
    [{ Status: 0 }, false, "no edgeload-verification=… TXT record", "the name exists, no TXT record"],
    [
      txt(`"edgeload-verification=${"cd".repeat(32)}"`),
      false,
      "holds edgeload-verification=cdcdcdcdcdcd…, not this deployment's token",
      "another deployment's token",
    ],
    [{ Status: 0, Answer: [{ type: 5, data: "elsewhere.example.com." }] }, false, "no edgeload-verification=", "a CNAME is not a TXT record"],
    ["<html>", false, "is not DNS JSON", "not a DNS JSON answer"],
  ])("%j: found %s (%s; %s)", (answer, found, detail, _why) => {
    const finding = findInDohAnswer(answer, PROOF);
    expect(finding.found).toBe(found);
    expect(finding.detail).toContain(detail);
  });

  it("undoes zone-file escapes in a TXT string", () => {
    expect(txtValue('"a\\"b\\\\c\\065"')).toBe('a"b\\cA');
    expect(txtValue("unquoted")).toBe("unquoted");
  });

  it("asks the resolver's JSON API for the TXT record by name", () => {
    expect(dohQueryUrl("https://cloudflare-dns.com/dns-query", "_edgeload.api.example.com")).toBe(
      "https://cloudflare-dns.com/dns-query?name=_edgeload.api.example.com&type=TXT",
    );
  });

  it("takes the resolver from TARGET_VERIFICATION_DOH, Cloudflare's by default, and refuses one that is not http(s)", () => {
    expect(parseResolverSetting(undefined)).toEqual({ ok: true, value: "https://cloudflare-dns.com/dns-query" });
    expect(parseResolverSetting("http://127.0.0.1:5353/dns-query")).toEqual({ ok: true, value: "http://127.0.0.1:5353/dns-query" });
    expect(parseResolverSetting("dns.example")).toMatchObject({ ok: false, detail: expect.stringContaining("TARGET_VERIFICATION_DOH") });
  });
});

describe("reading the well-known file", () => {
  it.each([
    // [status, body, found, detail, why]
    [200, `${LINE}\n`, true, PROOF.wellKnown.url, "the line alone"],
    [200, `# edgeload\r\n  ${LINE}  \r\nother=1`, true, PROOF.wellKnown.url, "one line among others, spaces and CRLF ignored"],
    [200, `prefix ${LINE}`, false, "has no edgeload-verification=", "inside another line does not count"],
    [200, `edgeload-verification=${"ef".repeat(32)}`, false, "holds edgeload-verification=efefefefefef…", "another token"],
    [404, LINE, false, "answered 404", "only a 2xx counts, whatever its body"],
  ])("%s %j: found %s", (status, body, found, detail, _why) => {
    const finding = findInWellKnown(status, body, PROOF);
    expect(finding.found).toBe(found);
    expect(finding.detail).toContain(detail);
  });
});

describe("the judgement and its expiry", () => {
  const dns = (found: boolean): ProofFinding => ({ method: "dns", found, detail: found ? "TXT record" : "no TXT record" });
  const file = (found: boolean): ProofFinding => ({ method: "well-known", found, detail: found ? "file" : "file answered 404" });
  const t0 = Date.UTC(2026, 10, 1);

  it("a proof found stands seven days from the check", () => {
    const record = judgeFindings("api.example.com", [dns(false), file(true)], t0);
    expect(record).toEqual({ host: "api.example.com", method: "well-known", verifiedAtMs: t0, expiresAtMs: t0 + 7 * DAY_MS, checkedAtMs: t0, detail: "file" });
    expect(PROOF_LIFETIME_MS).toBe(7 * DAY_MS);
  });

  it("DNS is named first when both prove it", () => {
    expect(judgeFindings("h", [dns(true), file(true)], t0).method).toBe("dns");
  });

  it("nothing found: unverified, with every reason", () => {
    expect(judgeFindings("h", [dns(false), file(false)], t0)).toMatchObject({ method: null, verifiedAtMs: null, detail: "no TXT record; file answered 404" });
  });

  it.each([
    // [time of asking, standing, why]
    [t0, "verified", "at the check"],
    [t0 + 7 * DAY_MS - 1, "verified", "the last millisecond of the week"],
    [t0 + 7 * DAY_MS, "expired", "a week on: re-checked at the next run"],
  ])("at %s a week-long proof is %s (%s)", (nowMs, standing, _why) => {
    expect(standingOf(judgeFindings("h", [dns(true)], t0), nowMs)).toBe(standing);
  });

  it("no record, or a record of a failed check, is unverified", () => {
    expect(standingOf(null, t0)).toBe("unverified");
    expect(standingOf(judgeFindings("h", [dns(false)], t0), t0)).toBe("unverified");
  });

  it("an expired proof re-checked after the record was withdrawn becomes unverified, not verified again", () => {
    const proved = judgeFindings("h", [dns(true)], t0);
    const later = t0 + 8 * DAY_MS;
    expect(standingOf(proved, later)).toBe("expired");
    const rechecked = judgeFindings("h", [dns(false), file(false)], later);
    expect(standingOf(rechecked, later)).toBe("unverified");
    expect(rechecked.checkedAtMs).toBe(later);
  });

  it("an expired proof re-checked with the record still there stands another week from the re-check", () => {
    const later = t0 + 8 * DAY_MS;
    const rechecked = judgeFindings("h", [dns(true)], later);
    expect(standingOf(rechecked, later + 6 * DAY_MS)).toBe("verified");
    expect(rechecked.expiresAtMs).toBe(later + 7 * DAY_MS);
  });
});
