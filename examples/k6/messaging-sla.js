/**
 * The messaging send SLA (../messaging-sla.json) as a k6 script: a bearer-authenticated
 * POST per iteration, ramped up, held and ramped down in three stages, with think time of
 * 0.5–1.5 s and SLA thresholds on the send's own metrics.
 *
 *   k6 run -e BASE_URL=http://127.0.0.1:9090 -e MESSAGING_TOKEN=… examples/k6/messaging-sla.js
 *   edgeload run examples/k6/messaging-sla.js -e BASE_URL=http://127.0.0.1:9090 -e MESSAGING_TOKEN=…
 *
 * SCALE (default 1) shortens the stages.
 */
import http from "k6/http";
import { check, sleep } from "k6";
import { Rate, Trend } from "k6/metrics";
import { b64encode } from "k6/encoding";

const BASE = __ENV.BASE_URL;
const SCALE = Number(__ENV.SCALE || 1);
const sendDuration = new Trend("send_duration", true);
const sendSuccess = new Rate("send_success_rate");

const stage = (target, seconds) => ({ target, duration: `${Math.max(1, Math.round(seconds * SCALE))}s` });

export const options = {
  stages: [stage(10, 30), stage(10, 60), stage(0, 30)],
  thresholds: {
    send_duration: ["p(95)<250", "p(99)<500"],
    send_success_rate: ["rate>0.99"],
    http_req_failed: ["rate<0.01"],
  },
};

export default function () {
  const body = {
    conv_id: `conv-${__VU}`,
    from_device_id: `device-${__VU}-a`,
    to_device_id: `device-${__VU}-b`,
    ciphertext: b64encode(`message ${__ITER} from VU ${__VU}`),
    header: { v: 1, ratchet: Math.random().toString(36).slice(2, 18), n: __ITER },
  };
  const res = http.post(`${BASE}/app/messages/send`, JSON.stringify(body), {
    headers: { authorization: `Bearer ${__ENV.MESSAGING_TOKEN}`, "content-type": "application/json" },
  });
  check(res, { accepted: (r) => r.status === 202 });
  sendDuration.add(res.timings.duration);
  sendSuccess.add(res.status === 202);
  sleep(0.5 + Math.random());
}
