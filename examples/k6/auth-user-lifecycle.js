/**
 * The auth user lifecycle (../auth-user-lifecycle.json) as a k6 script: create a user,
 * log in (capturing the token), read the user with it, log out, with think time between.
 * Runs unmodified under k6 and under `edgeload run`:
 *
 *   k6 run -e BASE_URL=http://127.0.0.1:9090 examples/k6/auth-user-lifecycle.js
 *   edgeload run examples/k6/auth-user-lifecycle.js -e BASE_URL=http://127.0.0.1:9090
 *
 * SCALE (default 1) shortens every stage and the think time alike, for quick runs;
 * VU_SCALE (default 1) scales the VU targets.
 */
import http from "k6/http";
import { check, sleep } from "k6";
import { Rate, Trend } from "k6/metrics";

const BASE = __ENV.BASE_URL;
const SCALE = Number(__ENV.SCALE || 1);
const VU_SCALE = Number(__ENV.VU_SCALE || 1);
const PASSWORD = "Passw0rd-edgeload";
const JSON_HEADERS = { "content-type": "application/json" };

const metrics = Object.fromEntries(
  ["create_user", "login", "get_user", "logout"].map((step) => [
    step,
    {
      duration: new Trend(`${step}_duration`, true),
      success: new Rate(`${step}_success_rate`),
    },
  ]),
);

const stage = (target, seconds) => ({ target: Math.round(target * VU_SCALE), duration: `${Math.max(1, Math.round(seconds * SCALE))}s` });

export const options = {
  scenarios: {
    lifecycle: {
      executor: "ramping-vus",
      startVUs: 0,
      stages: [stage(50, 60), stage(50, 180), stage(100, 60), stage(100, 180), stage(0, 60)],
      gracefulRampDown: "30s",
    },
  },
  thresholds: {
    login_duration: ["p(95)<300"],
    http_req_failed: ["rate<0.05"],
    checks: ["rate>0.95"],
  },
};

function record(step, response, expected) {
  metrics[step].duration.add(response.timings.duration);
  metrics[step].success.add(response.status === expected);
}

function randomName(length) {
  const letters = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let i = 0; i < length; i++) out += letters[Math.floor(Math.random() * letters.length)];
  return out;
}

export default function () {
  const username = `user_${randomName(12)}`;
  const created = http.post(`${BASE}/app/v1/user`, JSON.stringify({ username, email: `${username}@example.test`, password: PASSWORD }), {
    headers: JSON_HEADERS,
    tags: { step: "create_user" },
  });
  check(created, { "user created": (r) => r.status === 201 });
  record("create_user", created, 201);
  sleep(1 * SCALE);

  const login = http.post(`${BASE}/app/login`, JSON.stringify({ username, password: PASSWORD }), { headers: JSON_HEADERS, tags: { step: "login" } });
  check(login, { "logged in": (r) => r.status === 200 });
  record("login", login, 200);
  const token = login.status === 200 ? login.json("token") : "";
  sleep(1 * SCALE);

  const auth = { headers: { authorization: `Bearer ${token}` } };
  const user = http.get(`${BASE}/app/user`, { ...auth, tags: { step: "get_user" } });
  check(user, { "got the user": (r) => r.status === 200, "same user": (r) => r.status === 200 && r.json("username") === username });
  record("get_user", user, 200);
  sleep(1 * SCALE);

  const logout = http.del(`${BASE}/app/logout`, null, { ...auth, tags: { step: "logout" } });
  check(logout, { "logged out": (r) => r.status === 204 });
  record("logout", logout, 204);
  sleep(2 * SCALE);
}
