/**
 * The corpus scripts whose outcome under `edgeload run` differs from k6's, each with why.
 * test/e2e/k6-corpus.test.ts fails when a script differs and is not here (a regression), and
 * when a script here no longer differs (the list must stay true: delete its line). The reasons
 * are printed in docs/k6.md's compatibility table.
 */
export const EXPECTED_DIFFERENCES: Readonly<Record<string, string>> = {
  // Refused before any load, by design: nothing at the edge can run them.
  "k6-grpc-healthcheck":
    "refused, exit 104: k6/net/grpc needs HTTP/2 streams Workers' fetch does not offer (k6 runs it; its connect fails in the iteration, exit 0)",
  "qp-xk6-extension": "refused, exit 104: an xk6 extension is Go code compiled into a custom k6 binary (k6 v1.8.1 without it: exit 107)",
  // edgeload's three-valued verdict: a threshold with no samples is not a pass.
  "k6-threshold-name-tokens":
    "exit 75: the threshold's sub-metric has no samples, so edgeload's verdict is inconclusive (the design's third verdict); k6 passes it and exits 0",
  // Platform limits: a Worker's WebSocket has no ping() (the runtime answers the server's pings itself).
  "k6-websockets-echo":
    "ws.ping() throws (a Worker's WebSocket cannot send pings; the runtime answers the server's), so the iteration ends with an error and neither ws_ping nor ws_session_duration is reported",
  "xws-local-echo":
    "ws.ping() throws (a Worker's WebSocket cannot send pings; the runtime answers the server's), so the interval that pings ends the iteration with an error and neither ws_ping nor ws_session_duration is reported",
  "k6-ws-legacy-echo":
    "k6/ws's socket.ping() throws (a Worker's WebSocket cannot send pings), so the interval that pings ends the session with an error before the script's check of the 101 runs; neither ws_ping nor ws_session_duration is reported",
  "dashboard-demo-ws":
    "refused, exit 104: its thresholds are on ws_ping, which edgeload cannot measure (a Worker's WebSocket cannot send pings), so the run spec is invalid; k6 runs it",
  // Platform limit: a Worker may not generate code from strings. k6chaijs-contracts validates
  // with ajv 6, which compiles every JSON schema into a function with new Function().
  "contracts-test":
    "exit 99: ajv 6 (bundled by k6chaijs-contracts) compiles each JSON schema with new Function(), which a Worker forbids (EvalError: code generation from strings disallowed), so the checks that validate a response against a schema fail; k6's goja allows it and every check passes",
  "contracts-simple":
    "exit 99: ajv 6 (bundled by k6chaijs-contracts) compiles each JSON schema with new Function(), which a Worker forbids (EvalError: code generation from strings disallowed), so its check that validates against a schema fails; k6's goja allows it and every check passes",
};
