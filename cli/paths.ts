/** Where the project lives, for files the CLI keeps under it (.edgeload/, reports/). */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
