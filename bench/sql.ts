/**
 * `getContext` latency on the SQL stores (PGlite, and PostgreSQL when `DATABASE_URL` is set) for
 * conversations of 100, 10,000 and 100,000 messages. The hot path reads a page of rows sized by
 * the budget (about 220 rows here), never the history, so the latency stops growing once a
 * conversation holds a page: 100,000 / 10,000 should be about 1. The 100-message conversation is
 * smaller than one page, so it reads fewer rows than the others.
 */
import { type ConfigError, Effect, Layer, Logger, LogLevel } from "effect"
import { randomUUID } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import type { RepositoryError } from "../src/errors/RepositoryError.js"
import * as ApproximateTokenCounter from "../src/layers/ApproximateTokenCounter.js"
import * as PgRepository from "../src/layers/PgRepository.js"
import * as ChatMemoryService from "../src/services/ChatMemoryService.js"
import type { RepositoryService } from "../src/services/RepositoryService.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"

const budget = 3000
const warmup = 100
const runs = 500
const seedBatch = 1000
const lengths = [100, 10_000, 100_000] as const

interface Figure {
  readonly median: number
  readonly p99: number
}

const summarize = (samples: ReadonlyArray<number>): Figure => {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  return { median: at(0.5), p99: at(0.99) }
}

const text = (i: number) =>
  `Message ${i}: the delivery for order ORD-2024-${10000 + i} moves to slot ${i % 7}; please confirm the dock.`

/** Seeds a conversation of `length` messages in batches, then times `getContext` on it. */
const contextAtLength = (length: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService.ChatMemoryService
    const id = `bench-sql-${length}-${randomUUID()}`
    const seedStart = performance.now()
    for (let start = 0; start < length; start += seedBatch) {
      const batch = Array.from({ length: Math.min(seedBatch, length - start) }, (_, k) => ({
        role: (start + k) % 2 === 0 ? "user" as const : "assistant" as const,
        content: text(start + k)
      }))
      yield* memory.addMessages(id, batch)
    }
    const seedSeconds = (performance.now() - seedStart) / 1000
    const samples: Array<number> = []
    for (let i = 0; i < warmup + runs; i++) {
      const t0 = performance.now()
      yield* memory.getContext(id)
      if (i >= warmup) samples.push(performance.now() - t0)
    }
    yield* memory.clearMessages(id)
    return { ...summarize(samples), seedSeconds }
  })

const memoryOver = (repository: Layer.Layer<RepositoryService, RepositoryError | ConfigError.ConfigError>) =>
  ChatMemoryService.layer.pipe(
    Layer.provideMerge(SlidingWindowStrategy.layer({ promptTokenBudget: budget })),
    Layer.provideMerge(repository),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const ms = (x: number) => `${x.toFixed(3)} ms`.padStart(11)

/** Runs the SQL benchmark, prints it and writes `bench/results/sql.json`. */
export const sqlBench = Effect.gen(function*() {
  const stores: Array<readonly [string, Layer.Layer<RepositoryService, RepositoryError | ConfigError.ConfigError>]> = [
    ["PGlite (in memory)", PgRepository.layerPglite()]
  ]
  if ((process.env["DATABASE_URL"] ?? "") !== "") stores.push(["PostgreSQL", PgRepository.layerConfig()])
  else console.log("\nPostgreSQL: skipped (set DATABASE_URL to include it)")

  const results: Record<string, unknown> = {}
  console.log(
    `\ngetContext on SQL stores (sliding window of ${budget} tokens; ${runs} calls after ${warmup} warm-up)`
  )
  console.log("store                 messages      median         p99   seeding")
  for (const [name, repository] of stores) {
    const figures = yield* Effect.provide(
      Effect.forEach(lengths, (length) => Effect.map(contextAtLength(length), (figure) => [length, figure] as const)),
      memoryOver(repository)
    )
    const small = figures[0]?.[1]
    const medium = figures[1]?.[1]
    const large = figures[2]?.[1]
    for (const [length, figure] of figures) {
      console.log(
        `${name.padEnd(20)} ${length.toLocaleString("en-US").padStart(9)} ${ms(figure.median)} ${ms(figure.p99)}` +
          `   ${figure.seedSeconds.toFixed(1)} s`
      )
    }
    const ratio = (a: Figure | undefined, b: Figure | undefined) =>
      a !== undefined && b !== undefined ? a.median / b.median : Number.NaN
    const ratios = { "100000/100": ratio(large, small), "100000/10000": ratio(large, medium) }
    console.log(
      `  ratio of medians: 100,000 / 100 = ${ratios["100000/100"].toFixed(2)}; ` +
        `100,000 / 10,000 = ${ratios["100000/10000"].toFixed(2)}`
    )
    results[name] = { 100: small, 10000: medium, 100000: large, ratiosOfMedians: ratios }
  }
  mkdirSync("bench/results", { recursive: true })
  writeFileSync("bench/results/sql.json", JSON.stringify(results, null, 2))
  console.log("\nwritten to bench/results/sql.json")
}).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
