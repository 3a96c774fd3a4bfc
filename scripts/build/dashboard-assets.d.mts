/** Copies uPlot into the Worker's static assets; returns the folder it filled. */
export function buildDashboardAssets(): string;
