/**
 * `addMessages` throughput in batches of 1, 10, 100 and 1,000 messages per call, on each store:
 * messages per second from the median call time, and the speed-up over batches of one.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { type BenchStore, scaled, type Settings, slidingMemory } from "./setup.js"
import { type Figure, int, ms, printTable, ratio, summarize, timed, times } from "./stats.js"
import { batch } from "./texts.js"

/** Batch sizes, with the calls timed for each (fewer for larger batches). */
const plan = [[1, 400], [10, 200], [100, 60], [1000, 15]] as const

interface Row {
  readonly store: string
  readonly batchSize: number
  readonly call: Figure
  /** Messages per second at the median call time. */
  readonly messagesPerSecond: number
  /** Messages per second over every timed call together. */
  readonly aggregateMessagesPerSecond: number
  readonly speedupOverBatchOfOne: number
}

/**
 * Adds batches of every size to a conversation per size, the calls of each size spread evenly
 * over the same rounds (interleaved), so that a slow moment of the machine falls on all sizes.
 */
const allSizes = (settings: Settings) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const entries = plan.map(([size, calls]) => {
      const runs = scaled(settings, calls, 5)
      const warmup = Math.max(2, Math.round(runs / 10))
      return { size, runs, warmup, id: `throughput-${size}-${randomUUID()}`, done: 0, samples: new Array<number>() }
    })
    const rounds = Math.max(...entries.map((e) => e.warmup + e.runs))
    for (let round = 0; round < rounds; round++) {
      for (const entry of entries) {
        // The entry's share of the calls due by the end of this round.
        const due = Math.floor(((round + 1) * (entry.warmup + entry.runs)) / rounds)
        while (entry.done < due) {
          const [t] = yield* timed(memory.addMessages(entry.id, batch(entry.done * entry.size, entry.size)))
          if (entry.done >= entry.warmup) entry.samples.push(t)
          entry.done += 1
        }
      }
    }
    yield* Effect.forEach(entries, (entry) => memory.clearMessages(entry.id))
    return entries.map((entry) => ({
      size: entry.size,
      figure: summarize(entry.samples, entry.warmup),
      aggregate: (entry.size * entry.samples.length) / (entry.samples.reduce((n, t) => n + t, 0) / 1000)
    }))
  })

/** Runs the throughput benchmark on every store, prints it, and returns its JSON. */
export const throughputBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const rows: Array<Row> = []
    for (const store of stores) {
      const figures = yield* Effect.provide(allSizes(settings), slidingMemory(store.layer))
      const perSecond = (f: Figure, size: number) => size / (f.median / 1000)
      const single = figures[0]
      for (const { aggregate, figure, size } of figures) {
        rows.push({
          store: store.name,
          batchSize: size,
          call: figure,
          messagesPerSecond: perSecond(figure, size),
          aggregateMessagesPerSecond: aggregate,
          speedupOverBatchOfOne: single === undefined
            ? Number.NaN
            : ratio(perSecond(figure, size), perSecond(single.figure, single.size))
        })
      }
    }
    const method =
      "addMessages of `batch` messages (~100 characters each) per call, one conversation per batch size, sliding " +
      "window strategy, approximate counter; timed calls after 10% warm-up calls per row as shown, the calls " +
      "of all sizes interleaved"
    yield* printTable(
      "addMessages throughput in batches",
      method,
      ["store", "batch", "calls/warm-up", "median call", "p99 call", "msg/s (median)", "msg/s (all)", "x batch 1"],
      rows.map((r) => [
        r.store,
        int(r.batchSize),
        `${r.call.runs}/${r.call.warmup}`,
        ms(r.call.median),
        ms(r.call.p99),
        int(r.messagesPerSecond),
        int(r.aggregateMessagesPerSecond),
        times(r.speedupOverBatchOfOne)
      ]),
      [
        "msg/s (median) = batch / median call time; msg/s (all) = messages / total time of the timed calls",
        "x batch 1: msg/s (median) over the same store's msg/s (median) with one message per call"
      ]
    )
    return { method, rows }
  })
