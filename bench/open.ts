/**
 * What opening the memory costs: `ChatMemoryLive.layerConfig` built in a fresh process on the
 * in-memory store (the library's default), on PGlite reopening a data directory (the command
 * line's default after its first run, and any app with `MEMORY_DATA_DIR`), and on PGlite in memory
 * (a new database cluster at every open): the time to build it (the store's packages loaded, the
 * migrations run) and the resident memory after it, absolute and above the in-memory store's.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { scaled, type Settings } from "./setup.js"
import { fixed, interleaved, ms, printTable, ratio } from "./stats.js"

const root = fileURLToPath(new URL("..", import.meta.url))

interface Open {
  readonly ms: number
  readonly rssMiB: number
  readonly rssAfterGcMiB: number
}

type Kind = "memory" | "pglite-dir" | "pglite-memory"

/** The environment of a child: the store of `kind`, and no data directory unless it is given. */
const environment = (kind: Kind, dataDir: string): Record<string, string | undefined> => {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "MEMORY_DATA_DIR"))
  return kind === "memory"
    ? { ...base, MEMORY_STORE: "memory" }
    : kind === "pglite-dir"
    ? { ...base, MEMORY_STORE: "pglite", MEMORY_DATA_DIR: dataDir }
    : { ...base, MEMORY_STORE: "pglite" }
}

/** One open in a child process. */
const openOnce = (kind: Kind, dataDir: string) =>
  Effect.async<Open, Error>((resume) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "bench/openOnce.ts"], {
      cwd: root,
      env: environment(kind, dataDir)
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.on("close", (code) => {
      const line = out.trim().split("\n").at(-1) ?? ""
      if (code !== 0 || line.length === 0) return resume(Effect.fail(new Error(`openOnce ${kind}: exit ${code}`)))
      const parsed: unknown = JSON.parse(line)
      if (
        typeof parsed === "object" && parsed !== null && "ms" in parsed && typeof parsed.ms === "number" &&
        "rssMiB" in parsed && typeof parsed.rssMiB === "number" &&
        "rssAfterGcMiB" in parsed && typeof parsed.rssAfterGcMiB === "number"
      ) return resume(Effect.succeed({ ms: parsed.ms, rssMiB: parsed.rssMiB, rssAfterGcMiB: parsed.rssAfterGcMiB }))
      resume(Effect.fail(new Error(`openOnce ${kind}: unexpected output ${line}`)))
    })
    return Effect.sync(() => child.kill())
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

export const openBench = (settings: Settings) =>
  Effect.gen(function*() {
    const runs = scaled(settings, 7, 3)
    const dataDir = mkdtempSync(join(tmpdir(), "chat-memory-open-"))
    const kinds: ReadonlyArray<Kind> = ["memory", "pglite-dir", "pglite-memory"]
    const rss: Record<Kind, Array<number>> = { "memory": [], "pglite-dir": [], "pglite-memory": [] }
    const rssAfterGc: Record<Kind, Array<number>> = { "memory": [], "pglite-dir": [], "pglite-memory": [] }
    const body = (kind: Kind) => () =>
      Effect.map(openOnce(kind, dataDir), (open) => {
        rss[kind].push(open.rssMiB)
        rssAfterGc[kind].push(open.rssAfterGcMiB)
        return open.ms
      })
    // The warm-up round creates the data directory: every timed open of it is a reopen.
    const figures = yield* interleaved(1, runs, kinds.map(body)).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    )
    const names: Record<Kind, string> = {
      "memory": "in-memory store (the library's default)",
      "pglite-dir": "PGlite, reopening a data directory",
      "pglite-memory": "PGlite in memory (a new cluster: initdb)"
    }
    const base = median(rss.memory)
    const baseAfterGc = median(rssAfterGc.memory)
    const rows = kinds.map((kind, i) => ({
      store: names[kind],
      median: figures[i]?.median ?? NaN,
      p99: figures[i]?.p99 ?? NaN,
      rssMiB: median(rss[kind]),
      aboveMemoryMiB: median(rss[kind]) - base,
      rssAfterGcMiB: median(rssAfterGc[kind]),
      aboveMemoryAfterGcMiB: median(rssAfterGc[kind]) - baseAfterGc
    }))
    yield* printTable(
      "Opening the memory: ChatMemoryLive.layerConfig built in a fresh process",
      `${runs} processes per store after 1 warm-up, interleaved; time to build the layer (packages loaded, ` +
        "migrations run), resident memory of the process after it and after a full collection (the open's " +
        "garbage gone), absolute and above the in-memory store's process",
      ["store", "build median", "p99", "RSS MiB", "above in-memory", "after a GC", "above in-memory"],
      rows.map((r) => [
        r.store,
        ms(r.median),
        ms(r.p99),
        fixed(r.rssMiB, 0),
        `${fixed(r.aboveMemoryMiB, 0)} MiB`,
        fixed(r.rssAfterGcMiB, 0),
        `${fixed(r.aboveMemoryAfterGcMiB, 0)} MiB`
      ]),
      [
        `PGlite reopening a data directory / in memory: ${
          fixed(ratio(rows[1]?.median, rows[2]?.median), 2)
        }x of the time (in memory, initdb runs at every open)`
      ]
    )
    return { runs, rows }
  })
