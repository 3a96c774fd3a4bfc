/**
 * The layers of edgeload, checked by dependency-cruiser (`npm run lint:deps`, run by .ci/run
 * before the tests). Read from the bottom up; a layer imports only the layers below it:
 *
 *   scripts/bench                      benches, on top (may use test support, like tests)
 *   cli/                               the CLI, its local stack and API client (never scripts/bench)
 *   coordinator/                       the Worker entry (index.ts): http/ routes above run/ (the
 *                                      RunCoordinator) and aggregator/, above merge/ and store/
 *   workers/shard/                     the load shard DO       reports/  cloudflare/  seeds/
 *   workers/outbound/                  every request the Worker sends (allow-list, redirects)
 *   workers/env.ts                     the Worker's bindings   (above core, beside the data path)
 *   scenarios/   k6-compat/            flows and k6 scripts (never each other)
 *   core/                              pure: no cloudflare:* and no node: module, nothing outside core/
 *   presets/                           data only (JSON), read by core/spec/presets.ts
 *
 * Beside them: workers/target/ (the target Worker used locally and in tests: core only),
 * workers/fetch-floor/ (workerd's bare fetch loop, started by the CLI and benches: nothing of ours),
 * dashboard/ (pages the coordinator serves, browser scripts: core only), k6-scripts/ (the k6
 * scripts users run with k6: core only), scripts/build/ (build steps: nothing of ours;
 * they are run, as `node scripts/build/…`, and imported only by vitest configs and benches),
 * scripts/lint/ (checks `npm run lint:deps` runs: nothing of ours).
 *
 * Nothing imports coordinator/ but tests, benches and, for the store's shared queries, the
 * CLI: the Worker entry is coordinator/index.ts. Inside it: http/ (routes) above run/ (the
 * RunCoordinator) and aggregator/, both above merge/ and store/ (core only).
 * Test code (test/, *.test.ts, *.faults.ts, vitest configs) and test helpers (test/support/
 * and anything named *-fixtures.ts or test-support.ts) may import anything; no production
 * file imports them. Every rule is an error, and so is any cycle, type-only ones included.
 */

/** Test code: it may import anything, and nothing in production imports it. */
const TEST_CODE = ["^test/", "\\.test\\.ts$", "\\.faults\\.ts$", "(^|/)vitest\\.config\\.ts$"];
/** Test helpers: modules that exist for tests, wherever they are. */
const TEST_HELPER = ["^test/", "\\.test\\.ts$", "-fixtures\\.ts$", "(^|/)test-support\\.ts$"];
/** Where production code starts: the Workers, the CLI, the k6 scripts and sandbox, the browser scripts, the build. */
const PRODUCTION_ENTRIES = [
  "^coordinator/index\\.ts$",
  "^workers/target/index\\.ts$",
  "^workers/fetch-floor/index\\.ts$",
  "^cli/edgeload\\.mjs$",
  "^k6-compat/runtime/entry\\.ts$",
  "^k6-scripts/[^/]+\\.js$",
  "^dashboard/public/dashboard/[^/]+\\.js$",
  "^scripts/build/[^/]+\\.mjs$",
  "^scripts/lint/[^/]+\\.mjs$",
];
/** Code in the production folders. */
const PRODUCTION_CODE = "^(core|coordinator|workers|scenarios|k6-compat|cloudflare|reports|seeds|dashboard|cli|k6-scripts|scripts)/.+\\.(ts|mts|js|mjs)$";
/** Packages from node_modules (resolved) are fine in every layer. */
const NPM = "^node_modules/";

/** `from` every production file under `folder`. */
const layer = (folder) => ({ path: `^${folder}`, pathNot: TEST_CODE });
/** A dependency on anything but npm packages and the listed folders. */
const outside = (...folders) => ({ pathNot: [NPM, ...folders.map((f) => `^${f}`)] });

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      severity: "error",
      comment: "A cycle anywhere, type-only imports included: layers read top to bottom.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      severity: "error",
      comment: "core/ is pure: it imports only core/, npm packages and presets/ data, never cloudflare:* or node:* (it runs in Workers and is tested in Node).",
      from: layer("core/"),
      to: outside("core/", "presets/[^/]+\\.json$"),
    },
    {
      name: "scenarios-on-core",
      severity: "error",
      comment: "scenarios/ imports only core/ (never k6-compat/).",
      from: layer("scenarios/"),
      to: outside("core/", "scenarios/"),
    },
    {
      name: "k6-compat-on-core",
      severity: "error",
      comment: "k6-compat/ imports only core/ (never scenarios/), Node built-ins for bundling and cloudflare:workers for the sandbox.",
      from: layer("k6-compat/"),
      // ./script.js is the script's own module, made by k6-compat/bundle.ts for each bundle.
      to: { ...outside("core/", "k6-compat/", "cloudflare:workers$", "\\./script\\.js$"), dependencyTypesNot: ["core"] },
    },
    {
      name: "worker-env-on-core",
      severity: "error",
      comment: "workers/env.ts (the bindings) names the Durable Objects by their RPC surfaces in core/, not by their classes.",
      from: { path: "^workers/env\\.ts$" },
      to: outside("core/"),
    },
    {
      name: "shard-below-coordinator",
      severity: "error",
      comment:
        "workers/shard/ imports core/, scenarios/, k6-compat/, the outbound module and the bindings (workers/env.ts): never coordinator/, reports/, cloudflare/.",
      from: layer("workers/shard/"),
      to: outside("core/", "scenarios/", "k6-compat/", "workers/shard/", "workers/outbound/", "workers/env\\.ts$", "cloudflare:workers$"),
    },
    {
      name: "outbound-on-core",
      severity: "error",
      comment: "workers/outbound/ (the one way out of the Worker) imports only core/ and the bindings' types.",
      from: layer("workers/outbound/"),
      to: outside("core/", "workers/outbound/", "workers/env\\.ts$"),
    },
    {
      name: "coordinator-imports-below",
      severity: "error",
      comment: "coordinator/ imports the layers below it and the pages and reports it serves, never the CLI, benches, seeds or the target Worker.",
      from: layer("coordinator/"),
      to: {
        ...outside(
          "core/",
          "scenarios/",
          "k6-compat/",
          "workers/shard/",
          "workers/outbound/",
          "workers/env\\.ts$",
          "reports/",
          "cloudflare/",
          "dashboard/",
          "coordinator/",
          "cloudflare:workers$",
        ),
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "coordinator-merge-on-core",
      severity: "error",
      comment:
        "coordinator/merge/ (what the RunCoordinator and the RunAggregators both use: flush log, intake, open windows, children's progress, ticks) imports only core/.",
      from: layer("coordinator/merge/"),
      to: { ...outside("core/", "coordinator/merge/"), dependencyTypesNot: ["core"] },
    },
    {
      name: "coordinator-store-on-core",
      severity: "error",
      comment: "coordinator/store/ (every D1 statement) imports only core/ and its migrations.",
      from: layer("coordinator/store/"),
      to: { ...outside("core/", "coordinator/store/", "coordinator/migrations/"), dependencyTypesNot: ["core"] },
    },
    {
      name: "aggregator-not-on-the-coordinator-object",
      severity: "error",
      comment:
        "coordinator/aggregator/ shares merge/ and store/ with the RunCoordinator; it never imports the coordinator object's room (run/) or the routes (http/).",
      from: layer("coordinator/aggregator/"),
      to: { path: "^coordinator/(run|http)/" },
    },
    {
      name: "objects-not-on-routes",
      severity: "error",
      comment: "Routes call the objects, never the other way: nothing in coordinator/ but the Worker entry (index.ts) imports coordinator/http/.",
      from: { path: "^coordinator/", pathNot: ["^coordinator/http/", "^coordinator/index\\.ts$", ...TEST_CODE] },
      to: { path: "^coordinator/http/" },
    },
    {
      name: "nothing-imports-coordinator",
      severity: "error",
      comment:
        "Only the Worker entry (coordinator/index.ts) and its own modules, tests and benches import coordinator/. One exception: the CLI reads a local stack's results with the store's own queries (coordinator/store/results-queries.ts, core only), so both paths run the same statements.",
      from: { pathNot: ["^coordinator/", "^scripts/bench/", ...TEST_CODE, ...TEST_HELPER] },
      to: { path: "^coordinator/", pathNot: "^coordinator/store/results-queries\\.ts$" },
    },
    {
      name: "reports-above-core",
      severity: "error",
      comment: "reports/ imports core/ and cloudflare/ (the analytics it shows); it is imported by the coordinator, the CLI and benches only.",
      from: layer("reports/"),
      to: outside("core/", "reports/", "cloudflare/"),
    },
    {
      name: "cloudflare-above-core",
      severity: "error",
      comment: "cloudflare/ (analytics, platform facts) imports only core/.",
      from: layer("cloudflare/"),
      to: outside("core/", "cloudflare/"),
    },
    {
      name: "seeds-above-core",
      severity: "error",
      comment: "seeds/ imports only core/ and Node built-ins.",
      from: layer("seeds/"),
      to: { ...outside("core/", "seeds/"), dependencyTypesNot: ["core"] },
    },
    {
      name: "cli-below-bench",
      severity: "error",
      comment: "The CLI never imports scripts/bench/ (the benches import the CLI).",
      from: layer("cli/"),
      to: { path: "^scripts/bench/" },
    },
    {
      name: "cli-not-on-workers",
      severity: "error",
      comment: "The CLI drives the Workers over HTTP: it imports no shard, target Worker or bindings module.",
      from: layer("cli/"),
      to: { path: "^workers/" },
    },
    {
      name: "target-worker-on-core",
      severity: "error",
      comment: "workers/target/ (the target Worker) imports only core/; only tests and benches import it.",
      from: layer("workers/target/"),
      to: outside("core/", "workers/target/", "cloudflare:workers$"),
    },
    {
      name: "fetch-floor-stands-alone",
      severity: "error",
      comment:
        "workers/fetch-floor/ is workerd's own fetch loop with no edgeload in it: it imports nothing of ours, and nothing imports it (it is started by its wrangler.toml).",
      from: layer("workers/fetch-floor/"),
      to: outside("workers/fetch-floor/", "cloudflare:workers$"),
    },
    {
      name: "nothing-imports-fetch-floor",
      severity: "error",
      from: { pathNot: ["^workers/fetch-floor/"] },
      to: { path: "^workers/fetch-floor/" },
    },
    {
      name: "nothing-imports-target-worker",
      severity: "error",
      from: { pathNot: ["^workers/target/", "^scripts/bench/", ...TEST_CODE, ...TEST_HELPER] },
      to: { path: "^workers/target/" },
    },
    {
      name: "dashboard-on-core",
      severity: "error",
      comment: "dashboard/ (pages and browser scripts) imports only core/; the coordinator serves it.",
      from: layer("dashboard/"),
      to: outside("core/", "dashboard/"),
    },
    {
      name: "k6-scripts-on-core",
      severity: "error",
      comment: "k6-scripts/ (run by k6) imports only dependency-free core/ modules.",
      from: layer("k6-scripts/"),
      to: { ...outside("core/", "k6-scripts/", "k6(/|$)"), dependencyTypesNot: ["core"] },
    },
    {
      name: "build-on-nothing",
      severity: "error",
      comment: "scripts/build/ (the asset build wrangler runs) imports only npm packages and Node built-ins.",
      from: layer("scripts/build/"),
      to: { ...outside("scripts/build/"), dependencyTypesNot: ["core"] },
    },
    {
      name: "build-steps-are-run-not-imported",
      severity: "error",
      comment:
        "scripts/build/ holds build steps: the CLI and every other product folder run them (`node scripts/build/…`, as wrangler's [build] does), never import them. Only vitest configs (their test setup) and benches may.",
      from: { pathNot: ["^scripts/build/", "^scripts/bench/", "(^|/)vitest\\.config\\.ts$"] },
      to: { path: "^scripts/build/" },
    },
    {
      name: "no-test-helper-in-production",
      severity: "error",
      comment: "A production file imports no test code or helper (benches may: they sit on top).",
      from: { pathNot: ["^scripts/bench/", ...TEST_CODE, ...TEST_HELPER] },
      to: { path: TEST_HELPER },
    },
    {
      name: "test-helpers-under-test",
      severity: "error",
      comment: "A test helper lives under test/support/ (or beside the tests under test/), not in a production folder.",
      from: { path: TEST_CODE },
      to: { path: TEST_HELPER, pathNot: "^test/" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "Every import resolves (cloudflare:* and k6 modules are provided by their runtimes).",
      from: {},
      to: { couldNotResolve: true, pathNot: ["^cloudflare:", "^k6(/|$)", "^https://jslib\\.k6\\.io/", "^\\./script\\.js$"] },
    },
    {
      name: "no-test-only-module-in-production-folder",
      severity: "error",
      comment: "A module in a production folder is reachable from a production entry point; one only tests (or benches) use belongs under test/support/.",
      from: { path: PRODUCTION_ENTRIES },
      to: { path: PRODUCTION_CODE, pathNot: ["\\.d\\.m?ts$", "^scripts/bench/", ...PRODUCTION_ENTRIES, ...TEST_CODE, ...TEST_HELPER], reachable: false },
    },
  ],
  options: {
    doNotFollow: { path: NPM },
    // What git ignores (installs, wrangler's builds, local runs, the vendored uPlot) is not ours to check,
    // nor the public k6 corpus: scripts kept as published, whose imports resolve in the folder the test lays out.
    exclude: { path: ["(^|/)(node_modules|\\.wrangler|\\.edgeload|\\.cache|dist)/", "^dashboard/public/dashboard/vendor/", "^test/fixtures/k6-corpus/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.node.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
      extensions: [".ts", ".mts", ".js", ".mjs", ".cjs", ".json", ".d.ts"],
    },
  },
};
