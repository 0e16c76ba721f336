/**
 * `getContext` latency against history length: conversations of 100, 10,000 and 100,000 messages
 * on each store (in memory, PGlite, and PostgreSQL when `DATABASE_URL` is set). The hot path reads
 * a page of rows sized by the budget (about 220 rows here), never the history, so the latency
 * stops growing once a conversation holds a page: 100,000 / 10,000 should be about 1. The
 * 100-message conversation is smaller than one page, so it reads fewer rows than the others.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { type BenchStore, budget, scaled, type Settings, slidingMemory } from "./setup.js"
import { type Figure, interleaved, ms, printTable, ratio, summarize, timed, times } from "./stats.js"
import { batch } from "./texts.js"

const seedBatch = 1000
const lengths = [100, 10_000, 100_000] as const

/** Seeds a conversation of `length` messages in batches. */
const seed = (length: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const id = `history-${length}-${randomUUID()}`
    const [seedMs] = yield* timed(Effect.gen(function*() {
      for (let start = 0; start < length; start += seedBatch) {
        yield* memory.addMessages(id, batch(start, Math.min(seedBatch, length - start)))
      }
    }))
    return { id, seedSeconds: seedMs / 1000 }
  })

/** Seeds one conversation per length, then times `getContext` on each in turn, round after round. */
const contextByLength = (warmup: number, runs: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const seeded = yield* Effect.forEach(lengths, seed)
    const figures = yield* interleaved(
      warmup,
      runs,
      seeded.map(({ id }) => () => Effect.map(timed(memory.getContext(id)), ([t]) => t))
    )
    yield* Effect.forEach(seeded, ({ id }) => memory.clearMessages(id))
    return lengths.map((messages, k) => ({
      messages,
      figure: { ...(figures[k] ?? summarize([], warmup)), seedSeconds: seeded[k]?.seedSeconds ?? Number.NaN }
    }))
  })

interface StoreRow {
  readonly store: string
  readonly byLength: ReadonlyArray<{ readonly messages: number; readonly figure: Figure & { seedSeconds: number } }>
  readonly ratiosOfMedians: { readonly "100000/100": number; readonly "100000/10000": number }
}

/** Runs the history-length benchmark on every store, prints it, and returns its JSON. */
export const sqlBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const warmup = scaled(settings, 100, 10)
    const runs = scaled(settings, 500, 50)
    const results: Array<StoreRow> = []
    for (const store of stores) {
      const byLength = yield* Effect.provide(contextByLength(warmup, runs), slidingMemory(store.layer))
      const median = (n: number) => byLength.find((entry) => entry.messages === n)?.figure.median
      results.push({
        store: store.name,
        byLength,
        ratiosOfMedians: {
          "100000/100": ratio(median(100_000), median(100)),
          "100000/10000": ratio(median(100_000), median(10_000))
        }
      })
    }
    const method = `sliding window of ${budget} tokens; each conversation seeded in batches of ${seedBatch}, ` +
      `then ${runs} getContext calls on each after ${warmup} warm-up, the three lengths in turn in every round`
    yield* printTable(
      "getContext latency against history length",
      method,
      ["store", "messages", "median", "p99", "seeding", "x median vs 100", "x median vs 10,000"],
      results.flatMap((r) =>
        r.byLength.map(({ figure, messages }) => [
          r.store,
          messages.toLocaleString("en-US"),
          ms(figure.median),
          ms(figure.p99),
          `${figure.seedSeconds.toFixed(1)} s`,
          messages === 100_000 ? times(r.ratiosOfMedians["100000/100"]) : "",
          messages === 100_000 ? times(r.ratiosOfMedians["100000/10000"]) : ""
        ])
      ),
      ["x median: the median at 100,000 messages divided by the median at 100 (or 10,000) on the same store"]
    )
    return { method, warmup, runs, stores: results }
  })
