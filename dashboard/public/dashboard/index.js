// @ts-check
/** The runs list: GET /v1/runs every 5 s (the list of runs lives in D1), each row linking to its dashboard. */
import { byId, setRows } from "./common.js";

async function refresh() {
  const response = await fetch("/v1/runs?limit=50", { credentials: "same-origin" });
  if (!response.ok) return;
  const { runs } = await response.json();
  setRows(
    byId("runs"),
    runs.map((r) => [
      r.id,
      r.name ?? "",
      r.status,
      r.target,
      r.startedAt ? new Date(r.startedAt).toLocaleString() : "–",
      `${r.durationS} s`,
      r.thresholdsOk === null ? "–" : r.thresholdsOk ? "passed" : "failed",
    ]),
    (row, i) => {
      const cell = row.cells[0];
      const link = document.createElement("a");
      link.href = `/v1/runs/${runs[i].id}/dashboard`;
      link.textContent = runs[i].id;
      cell.replaceChildren(link);
      row.classList.add(runs[i].status);
    },
  );
}

await refresh();
setInterval(refresh, 5000);
