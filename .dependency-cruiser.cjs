/**
 * The direction of imports inside src/: each floor imports only the floors below it,
 * and an `internal/` folder is imported only by the modules it sits next to.
 */
const floor = (name, allowed, comment) => ({
  name,
  comment,
  severity: "error",
  from: { path: `^src/${name.split("-")[0]}/` },
  to: { path: "^src/", pathNot: `^src/(${allowed.join("|")})/` }
})

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    floor("domain-imports-only-domain", ["domain"], "domain holds the models and imports nothing else of ours"),
    floor("errors-imports-only-domain", ["errors", "domain"], "errors import only the domain"),
    floor("services-import-only-domain-and-errors", ["services", "domain", "errors"], "services are tags: shape, laws, tag"),
    floor(
      "strategies-import-no-layers",
      ["strategies", "services", "domain", "errors"],
      "strategies are policies over the services, never over a given adapter or the composition"
    ),
    floor("layers-import-no-cli", ["layers", "strategies", "services", "domain", "errors"], "nothing but the command line imports it"),
    {
      name: "nothing-imports-cli",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/cli/" },
      to: { path: "^src/cli/" }
    },
    {
      name: "internal-stays-home",
      comment: "an internal/ folder serves the modules beside it: strategies/internal only strategies/, and so on; " +
        "domain/internal and errors/internal hold the helpers of the models and errors (text checks, transcript " +
        "lines, turns, input decoding), which every floor above may use, and which the package does not export",
      severity: "error",
      from: { path: "^(src/[^/]+)/", pathNot: "^src/cli/" },
      to: { path: "^src/.*/?internal/", pathNot: ["^$1/", "^src/domain/internal/", "^src/errors/internal/"] }
    },
    {
      name: "cli-internal-stays-home",
      comment: "the command line keeps to the internals every floor may use, to the recall tools as an MCP " +
        "server serves them, and to the prompt-prefix check of its replay (the package's own application; the " +
        "package does not export them)",
      severity: "error",
      from: { path: "^src/cli/" },
      to: {
        path: "^src/.*/?internal/",
        pathNot: [
          "^src/cli/",
          "^src/domain/internal/",
          "^src/errors/internal/",
          "^src/layers/internal/recallTools\\.ts$",
          "^src/layers/ai/internal/prefix\\.ts$"
        ]
      }
    },
    {
      name: "domain-imports-effect-ai-types-only",
      comment: "the domain holds the message model: the conversions to and from @effect/ai live in src/layers/ai/ " +
        "(the one place a port to another major of effect must rewrite); an `import type` is erased and allowed",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "(^|/)@effect/ai", dependencyTypesNot: ["type-only"] }
    },
    ...["store", "skills", "tokens", "ai"].map((port) => ({
      name: `layers-${port}-internal-stays-home`,
      severity: "error",
      from: { path: "^src/layers/", pathNot: `^src/layers/${port}/` },
      to: { path: `^src/layers/${port}/internal/` }
    })),
    {
      name: "no-root-internal",
      comment: "no grab-bag internal/ at the root of src/",
      severity: "error",
      from: {},
      to: { path: "^src/internal/" }
    },
    {
      name: "no-barrel-imports",
      comment: "files inside src/ import each other directly, never through src/index.ts",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/index\\.ts$" },
      to: { path: "^src/index\\.ts$" }
    },
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } }
  ],
  options: {
    // Packages are leaves of the graph (not cruised), but kept in it: the domain rule above must
    // see an import of @effect/ai, and `tsPreCompilationDeps` keeps type-only imports, marked as
    // such, so that an `import type` passes and a run-time import fails.
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] }
  }
}
