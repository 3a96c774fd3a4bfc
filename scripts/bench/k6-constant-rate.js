// k6 side of `npm run bench`: the same open-model load edgeload sends, for comparison.
import http from "k6/http";

export const options = {
  discardResponseBodies: false,
  scenarios: {
    bench: {
      executor: "constant-arrival-rate",
      rate: Number(__ENV.RATE),
      timeUnit: "1s",
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS || 200),
      maxVUs: Number(__ENV.VUS || 200),
    },
  },
  summaryTrendStats: ["avg", "min", "med", "max", "p(90)", "p(95)", "p(99)"],
};

export default function () {
  http.get(__ENV.TARGET_URL);
}
