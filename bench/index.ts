/**
 * Benchmarks of the memory's own overhead, run by `npm run bench`. Figures are medians and p99
 * over many runs after a warm-up, and ratios to a baseline measured in the same run, because
 * absolute times on shared machines are noisy.
 */
import { Effect, Layer } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus } from "node:os"
import * as ApproximateTokenCounter from "../src/layers/ApproximateTokenCounter.js"
import * as MemoryRepository from "../src/layers/MemoryRepository.js"
import * as ChatMemoryService from "../src/services/ChatMemoryService.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import { sqlBench } from "./sql.js"

const budget = 3000
const warmup = 200
const runs = 2000

const MemoryLive = ChatMemoryService.layer.pipe(
  Layer.provideMerge(SlidingWindowStrategy.layer({ promptTokenBudget: budget })),
  Layer.provideMerge(MemoryRepository.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

interface Figure {
  readonly median: number
  readonly p99: number
}

const summarize = (samples: ReadonlyArray<number>): Figure => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
}

const text = (i: number) =>
  `Message ${i}: the delivery for order ORD-2024-${10000 + i} moves to slot ${i % 7}; please confirm the dock.`

/** The baseline: a plain array and a loop that keeps the newest messages within the budget. */
const arrayWindow = () => {
  const log: Array<{ role: string; content: string; tokens: number }> = []
  return (role: string, content: string) => {
    log.push({ role, content, tokens: Math.ceil(content.length / 4) + 4 })
    const window: Array<{ role: string; content: string }> = []
    let used = 0
    for (let i = log.length - 1; i >= 0; i--) {
      const entry = log[i]
      if (entry === undefined || used + entry.tokens > budget) break
      used += entry.tokens
      window.unshift(entry)
    }
    return window
  }
}

const perTurn = Effect.gen(function*() {
  const memory = yield* ChatMemoryService.ChatMemoryService
  const baseline = arrayWindow()
  const memorySamples: Array<number> = []
  const baselineSamples: Array<number> = []
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now()
    baseline("user", text(i))
    baseline("assistant", text(i + 1))
    const t1 = performance.now()
    yield* memory.addMessages("bench", [{ role: "user", content: text(i) }, {
      role: "assistant",
      content: text(i + 1)
    }])
    yield* memory.getContext("bench")
    const t2 = performance.now()
    if (i >= warmup) {
      baselineSamples.push(t1 - t0)
      memorySamples.push(t2 - t1)
    }
  }
  return { memory: summarize(memorySamples), baseline: summarize(baselineSamples) }
})

const contextAtLength = (length: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService.ChatMemoryService
    const id = `history-${length}`
    for (let start = 0; start < length; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, length - start) }, (_, k) => ({
        role: (start + k) % 2 === 0 ? "user" as const : "assistant" as const,
        content: text(start + k)
      }))
      yield* memory.addMessages(id, batch)
    }
    const samples: Array<number> = []
    for (let i = 0; i < 100 + 500; i++) {
      const t0 = performance.now()
      yield* memory.getContext(id)
      if (i >= 100) samples.push(performance.now() - t0)
    }
    return summarize(samples)
  })

const ms = (x: number) => `${x.toFixed(3)} ms`

const main = Effect.gen(function*() {
  const turn = yield* perTurn
  const small = yield* contextAtLength(100)
  const large = yield* contextAtLength(100_000)
  const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${availableParallelism()} cores, Node ${process.version}`
  const results = {
    machine,
    method: `in-memory store, sliding window of ${budget} tokens; per-turn: ${runs} turns after ${warmup} warm-up; ` +
      "getContext: 500 calls after 100 warm-up",
    perTurn: { ...turn, ratioOfMedians: turn.memory.median / turn.baseline.median },
    getContextByHistory: { 100: small, 100000: large, ratioOfMedians: large.median / small.median }
  }
  console.log(`machine: ${machine}`)
  console.log(`method:  ${results.method}\n`)
  console.log("figure                                   median       p99")
  console.log(`per turn, memory (add + getContext)      ${ms(turn.memory.median)}  ${ms(turn.memory.p99)}`)
  console.log(`per turn, plain array window (baseline)  ${ms(turn.baseline.median)}  ${ms(turn.baseline.p99)}`)
  console.log(`  ratio of medians: ${results.perTurn.ratioOfMedians.toFixed(1)}x`)
  console.log(`getContext, 100 messages                 ${ms(small.median)}  ${ms(small.p99)}`)
  console.log(`getContext, 100,000 messages             ${ms(large.median)}  ${ms(large.p99)}`)
  console.log(`  ratio of medians (100,000 / 100): ${results.getContextByHistory.ratioOfMedians.toFixed(2)}`)
  mkdirSync("bench/results", { recursive: true })
  writeFileSync("bench/results/latest.json", JSON.stringify(results, null, 2))
  console.log("\nwritten to bench/results/latest.json")
  yield* sqlBench
})

Effect.runPromise(Effect.provide(main, MemoryLive))
