/**
 * What to say when a seeded set fails its own verification (introspecting a sample of
 * each token type): which types the provider answered wrongly, and — when it accepted
 * tokens for another audience or client, which is Authrim's default — how to turn its
 * strict introspection validation on. Pure, so the wording is tested.
 */

export interface Verification {
  readonly verified: number;
  readonly incorrect: number;
  readonly results: Readonly<Record<string, { readonly expected: boolean; readonly correct: number; readonly incorrect: number; readonly errors: number }>>;
}

/** The types that only strict validation rejects on Authrim (mgmt/introspect.ts there). */
const STRICT_TYPES = ["wrong_audience", "wrong_client"];

export function verificationFailure(v: Verification, baseUrl: string): string {
  const wrong = Object.entries(v.results).filter(([, r]) => r.incorrect + r.errors > 0);
  const lines = [
    `the provider's introspection disagreed with the token mix: ${v.verified} correct, ${v.incorrect} incorrect; the set was not stored`,
    ...wrong.map(([type, r]) => `  ${type}: expected active=${r.expected}, ${r.incorrect} answered otherwise${r.errors ? `, ${r.errors} errors` : ""}`),
  ];
  const strict = wrong.filter(([type, r]) => STRICT_TYPES.includes(type) && r.incorrect > 0).map(([type]) => type);
  if (strict.length) {
    lines.push(
      `${strict.join(" and ")} tokens came back active: the provider does not check audience and client. On Authrim, turn strict validation on:`,
      `  curl -X PUT ${baseUrl}/api/admin/settings/introspection-validation -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"strictValidation": true}'`,
      "  then wait 60 s (Authrim caches positive answers that long) or turn its cache off:",
      `  curl -X PUT ${baseUrl}/api/admin/settings/introspection-cache -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"enabled": false}'`,
    );
  }
  lines.push("run the same command again once the provider answers correctly (users already made are reused)");
  return lines.join("\n");
}
