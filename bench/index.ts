/**
 * Benchmarks of the memory's own overhead, run by `npm run bench`. Every section prints a table
 * and all results go to one JSON file (`bench/results/latest.json`, or `BENCH_OUT`) with the
 * machine and the code they ran on. Figures are medians (and p99) over many runs after a warm-up,
 * and ratios to baselines measured in the same run, because absolute times on shared machines are
 * noisy.
 *
 * Environment: `DATABASE_URL` adds PostgreSQL (in a schema of its own, dropped afterwards);
 * `BENCH_QUICK=1` runs about a fifth of the runs; `BENCH_SCALE` multiplies run counts;
 * `BENCH_SECTIONS=turn,history,recall,recallcost,hybrid,throughput,summarizer,policy,tokens,load,open,users`
 * picks sections (`BENCH_SECTIONS=users` runs the user-scoped contexts alone); `BENCH_OUT` is the JSON path.
 */
import { FileSystem, Path } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, DateTime, Effect, Layer, Logger, LogLevel } from "effect"
import { loadavg } from "node:os"
import { hybridBench } from "./hybrid.js"
import { loadBench } from "./load.js"
import { openBench } from "./open.js"
import { perTurnBench } from "./perTurn.js"
import { policyBench } from "./policy.js"
import { code as readCode, machine } from "./provenance.js"
import { recallBench } from "./recall.js"
import { recallCostBench } from "./recallCost.js"
import { sectionNames, settings as readSettings, stores as selectStores } from "./setup.js"
import { sqlBench } from "./sql.js"
import { timed } from "./stats.js"
import { summarizerBench } from "./summarizer.js"
import { throughputBench } from "./throughput.js"
import { tokenizedOnceBench } from "./tokenizedOnce.js"
import { tokensBench } from "./tokens.js"
import { usersBench } from "./users.js"

/** Four significant digits in the JSON (integers above 1,000), so that it reads as the tables do. */
const rounded = (_key: string, value: unknown): unknown =>
  typeof value === "number" && Number.isFinite(value) && !Number.isInteger(value)
    ? Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(4))
    : value

const main = Effect.gen(function*() {
  const settings = yield* readSettings
  const { skipped, stores } = selectStores(settings)
  const host = machine()
  const code = yield* readCode
  const startedAt = DateTime.formatIso(yield* DateTime.now)
  yield* Console.log(
    `machine: ${host.cpu}, ${host.cores} cores, ${host.memoryGiB} GiB, Node ${host.node}, ${host.os}, ` +
      `load average ${host.loadAverage1mAtStart}\n` +
      `stores:  ${stores.map((s) => s.name).join(", ")}${skipped === null ? "" : `  (${skipped})`}\n` +
      `runs:    scale ${settings.scale}${settings.quick ? " (BENCH_QUICK)" : ""}; sections: ${
        settings.sections.join(", ")
      }`
  )
  // Fail at once, not after minutes of other sections, when the server cannot be reached.
  for (const store of stores.filter((s) => s.name === "PostgreSQL")) {
    yield* Effect.scoped(Layer.build(store.layer)).pipe(
      Effect.tapError(() => Console.error("PostgreSQL at DATABASE_URL cannot be used; unset DATABASE_URL to skip it"))
    )
  }
  const unknown = settings.sections.filter((s) => !sectionNames.some((name) => name === s))
  if (unknown.length > 0) yield* Console.log(`unknown sections ignored: ${unknown.join(", ")}`)

  const wanted = (name: (typeof sectionNames)[number]) => settings.sections.includes(name)
  const sections: Record<string, unknown> = {}
  const seconds: Record<string, number> = {}
  const run = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
    Effect.map(timed(effect), ([t, result]) => {
      sections[name] = result
      seconds[name] = Number((t / 1000).toFixed(1))
    })

  if (wanted("turn")) yield* run("perTurn", perTurnBench(settings, stores))
  if (wanted("history")) yield* run("getContextByHistoryLength", sqlBench(settings, stores))
  if (wanted("recall")) yield* run("searchByConversationLength", recallBench(settings, stores))
  if (wanted("recallcost")) yield* run("recallCost", recallCostBench(settings, stores))
  if (wanted("hybrid")) yield* run("hybridVectorSearch", hybridBench(settings, stores))
  if (wanted("throughput")) yield* run("addMessagesThroughput", throughputBench(settings, stores))
  if (wanted("summarizer")) yield* run("summarizerCost", summarizerBench(settings))
  if (wanted("policy")) yield* run("contextPolicies", policyBench(settings))
  if (wanted("tokens")) {
    yield* run("tokenCounting", tokensBench(settings))
    yield* run("tokenizedOnce", tokenizedOnceBench(settings))
  }
  if (wanted("load")) yield* run("load", loadBench(settings))
  if (wanted("open")) yield* run("open", openBench(settings))
  if (wanted("users")) yield* run("userScopedContext", usersBench(settings, stores))

  const total = Object.values(seconds).reduce((a, b) => a + b, 0)
  const results = {
    startedAt,
    machine: host,
    code,
    settings: { quick: settings.quick, scale: settings.scale, sections: settings.sections },
    stores: stores.map((s) => s.name),
    postgres: skipped ?? "included (a fresh schema, dropped afterwards)",
    units: "times in milliseconds, throughput in messages per second, tokens by the approximate counter " +
      "(characters / 4) unless a row names another",
    timing: "performance.now around each call; medians and p99 over the runs after warm-up; ratios of " +
      "medians taken in the same run",
    secondsPerSection: seconds,
    totalSeconds: Number(total.toFixed(1)),
    loadAverage1mAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)),
    sections
  }
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(path.dirname(settings.out), { recursive: true })
  yield* fs.writeFileString(settings.out, `${JSON.stringify(results, rounded, 2)}\n`)
  yield* Console.log(
    `\n${skipped ?? "PostgreSQL included"}\nsections took ${
      Object.entries(seconds).map(([k, v]) => `${k} ${v} s`).join(", ")
    }; total ${total.toFixed(1)} s\nwritten to ${settings.out}`
  )
})

NodeRuntime.runMain(
  main.pipe(Effect.provide(NodeContext.layer), Logger.withMinimumLogLevel(LogLevel.Warning)),
  { disableErrorReporting: false }
)
