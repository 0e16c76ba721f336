/**
 * What opening the memory costs: `ChatMemoryLive.layerConfig` built in a fresh process on the
 * in-memory store (the library's default) and on PGlite in memory, the time to build it (the
 * store's packages loaded, the migrations run) and the resident memory after it.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { scaled, type Settings } from "./setup.js"
import { fixed, interleaved, ms, printTable, ratio, times } from "./stats.js"

const root = fileURLToPath(new URL("..", import.meta.url))

interface Open {
  readonly ms: number
  readonly rssMiB: number
}

/** The environment without a data directory: PGlite opens in memory. */
const withoutDataDir = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "MEMORY_DATA_DIR"))

/** One open in a child process, with the store `store`. */
const openOnce = (store: "memory" | "pglite") =>
  Effect.async<Open, Error>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/openOnce.ts"], {
      cwd: root,
      env: { ...withoutDataDir(), MEMORY_STORE: store }
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.on("close", (code) => {
      const line = out.trim().split("\n").at(-1) ?? ""
      if (code !== 0 || line.length === 0) return resume(Effect.fail(new Error(`openOnce ${store}: exit ${code}`)))
      const parsed: unknown = JSON.parse(line)
      if (
        typeof parsed === "object" && parsed !== null && "ms" in parsed && typeof parsed.ms === "number" &&
        "rssMiB" in parsed && typeof parsed.rssMiB === "number"
      ) return resume(Effect.succeed({ ms: parsed.ms, rssMiB: parsed.rssMiB }))
      resume(Effect.fail(new Error(`openOnce ${store}: unexpected output ${line}`)))
    })
    return Effect.sync(() => child.kill())
  })

export const openBench = (settings: Settings) =>
  Effect.gen(function*() {
    const runs = scaled(settings, 7, 3)
    const rss: Record<"memory" | "pglite", Array<number>> = { memory: [], pglite: [] }
    const body = (store: "memory" | "pglite") => () =>
      Effect.map(openOnce(store), (open) => {
        rss[store].push(open.rssMiB)
        return open.ms
      })
    const [memory, pglite] = yield* interleaved(1, runs, [body("memory"), body("pglite")])
    const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
    const rows = [
      ["in-memory store (default)", ms(memory?.median ?? NaN), ms(memory?.p99 ?? NaN), fixed(median(rss.memory), 0)],
      ["PGlite in memory", ms(pglite?.median ?? NaN), ms(pglite?.p99 ?? NaN), fixed(median(rss.pglite), 0)]
    ]
    yield* printTable(
      "Opening the memory: ChatMemoryLive.layerConfig built in a fresh process",
      `${runs} processes per store after 1 warm-up, interleaved; time to build the layer (packages loaded, ` +
        "migrations run), resident memory after it",
      ["store", "build median", "p99", "RSS MiB"],
      rows,
      [`in memory / PGlite: ${times(ratio(memory?.median, pglite?.median))} of the time`]
    )
    return {
      runs,
      memory: { ...memory, rssMiB: median(rss.memory) },
      pglite: { ...pglite, rssMiB: median(rss.pglite) },
      memoryOverPglite: ratio(memory?.median, pglite?.median)
    }
  })
