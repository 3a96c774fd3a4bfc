/**
 * The spec's budget cap: `"maxCost": 5` (US dollars). When the run's estimated cost
 * (core/plan/run-cost.ts, from the plan and core/plan/cloudflare-pricing.ts) is above it, the run is
 * refused before any load, naming `maxCost`.
 */
import { z } from "zod";

export const maxCostSchema = z.number().positive("a budget in US dollars above 0, e.g. 5").finite().optional();
