/**
 * The CRUD mix with hot keys (../crud-hot-keys.json) as a k6 script: setup() creates
 * 10,000 records, VUs read (80%) and write (20%) keys drawn from a Zipf distribution
 * (exponent 1: a few keys take most of the traffic), teardown() deletes the records.
 *
 *   k6 run -e BASE_URL=http://127.0.0.1:9090 examples/k6/crud-hot-keys.js
 *   edgeload run examples/k6/crud-hot-keys.js -e BASE_URL=http://127.0.0.1:9090
 *
 * SCALE (default 1) shortens every stage; VU_SCALE (default 1) scales the VU targets.
 */
import http from "k6/http";
import { check } from "k6";

const BASE = __ENV.BASE_URL;
const BUILD = __ENV.BUILD || "v1";
const KEYS = 10_000;
const SCALE = Number(__ENV.SCALE || 1);
const VU_SCALE = Number(__ENV.VU_SCALE || 1);

const stage = (target, seconds) => ({ target: Math.max(0, Math.round(target * VU_SCALE)), duration: `${Math.max(1, Math.round(seconds * SCALE))}s` });

export const options = {
  scenarios: {
    crud: {
      executor: "ramping-vus",
      startVUs: 0,
      stages: [stage(100, 30), stage(100, 60), stage(500, 30), stage(500, 60), stage(1000, 30), stage(1000, 60), stage(0, 30)],
      gracefulRampDown: "5s",
    },
  },
  thresholds: {
    http_req_failed: ["rate<0.01"],
    "http_req_duration{step:read}": ["p(95)<200"],
    "http_req_duration{step:write}": ["p(95)<400"],
    checks: ["rate>0.99"],
  },
};

/** Cumulative Zipf(s = 1) weights over ranks 1..KEYS, for inverse-transform sampling. */
const cumulative = (() => {
  const out = new Float64Array(KEYS);
  let sum = 0;
  for (let k = 1; k <= KEYS; k++) out[k - 1] = sum += 1 / k;
  for (let i = 0; i < KEYS; i++) out[i] /= sum;
  return out;
})();

function zipfKey() {
  const u = Math.random();
  let lo = 0;
  let hi = KEYS - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return `key-${lo + 1}`;
}

export function setup() {
  const res = http.post(`${BASE}/app/${BUILD}/records/bulk`, JSON.stringify({ count: KEYS, prefix: "key-", from: 1 }), {
    headers: { "content-type": "application/json" },
  });
  if (res.status >= 300 || !String(res.body).includes(`"created":${KEYS}`)) throw new Error(`setup could not create the records: ${res.status} ${res.body}`);
  return { keys: KEYS };
}

export default function () {
  const key = zipfKey();
  if (Math.random() < 0.8) {
    const res = http.get(`${BASE}/app/${BUILD}/records/${key}`, { tags: { step: "read" } });
    check(res, { found: (r) => r.status === 200 });
  } else {
    const value = Math.random().toString(36).slice(2).padEnd(32, "x");
    const res = http.put(`${BASE}/app/${BUILD}/records/${key}`, JSON.stringify({ value }), {
      headers: { "content-type": "application/json" },
      tags: { step: "write" },
    });
    check(res, { stored: (r) => r.status === 200 });
  }
}

export function teardown() {
  http.del(`${BASE}/app/${BUILD}/records?prefix=key-`);
}
