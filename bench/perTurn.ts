/**
 * The memory's overhead per turn: `addMessages` of a user and an assistant message, then
 * `getContext`, against a plain array sliding window timed in the same loop (same machine, same
 * moment), on each store. The summarization rows also wait for the background summarization
 * (`awaitIdle`, with a skill that answers at once), so they show its CPU cost too.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { roundTripsBench } from "./roundTrips.js"
import { type BenchStore, budget, scaled, type Settings, slidingMemory, summarizingMemory } from "./setup.js"
import { type Figure, ms, printTable, ratio, summarize, times } from "./stats.js"
import { text } from "./texts.js"

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
      window.push(entry)
    }
    return window.reverse()
  }
}

interface Row {
  readonly store: string
  readonly strategy: string
  readonly memory: Figure
  /** The parts of `memory`: addMessages, and getContext (with awaitIdle on summarization rows). */
  readonly addMessages: Figure
  readonly getContext: Figure
  readonly baseline: Figure
  readonly ratioOfMedians: number
  readonly ratioOfP99: number
}

const turns = (warmup: number, runs: number, waitIdle: boolean) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const id = `turn-${randomUUID()}`
    const baseline = arrayWindow()
    const memorySamples: Array<number> = []
    const addSamples: Array<number> = []
    const contextSamples: Array<number> = []
    const baselineSamples: Array<number> = []
    for (let i = 0; i < warmup + runs; i++) {
      const user = text(2 * i)
      const assistant = text(2 * i + 1)
      const t0 = performance.now()
      baseline("user", user)
      baseline("assistant", assistant)
      const t1 = performance.now()
      yield* memory.addMessages(id, [{ role: "user", content: user }, { role: "assistant", content: assistant }])
      const t2 = performance.now()
      yield* memory.getContext(id)
      if (waitIdle) yield* memory.awaitIdle(id)
      const t3 = performance.now()
      if (i >= warmup) {
        baselineSamples.push(t1 - t0)
        memorySamples.push(t3 - t1)
        addSamples.push(t2 - t1)
        contextSamples.push(t3 - t2)
      }
    }
    return {
      memory: summarize(memorySamples, warmup),
      addMessages: summarize(addSamples, warmup),
      getContext: summarize(contextSamples, warmup),
      baseline: summarize(baselineSamples, warmup)
    }
  })

const row = (
  store: string,
  strategy: string,
  figures: { memory: Figure; addMessages: Figure; getContext: Figure; baseline: Figure }
): Row => ({
  store,
  strategy,
  ...figures,
  ratioOfMedians: ratio(figures.memory.median, figures.baseline.median),
  ratioOfP99: ratio(figures.memory.p99, figures.baseline.p99)
})

/** Runs the per-turn benchmark on every store, prints it, and returns its JSON. */
export const perTurnBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const rows: Array<Row> = []
    for (const store of stores) {
      const inMemory = store.name === "in-memory"
      const warmup = scaled(settings, inMemory ? 200 : 50, 10)
      const runs = scaled(settings, inMemory ? 2000 : 500, 50)
      rows.push(
        row(store.name, "sliding window", yield* Effect.provide(turns(warmup, runs, false), slidingMemory(store.layer)))
      )
      rows.push(
        row(
          store.name,
          "summarization + awaitIdle",
          yield* Effect.provide(turns(warmup, runs, true), summarizingMemory(store.layer, { mode: "incremental" }))
        )
      )
    }
    const method = `one turn = addMessages(user, assistant) + getContext on one conversation, budget ${budget} ` +
      "tokens; the baseline (a JS array keeping the newest messages within the budget) is timed in the same loop; " +
      "runs after warm-up turns per row as shown"
    yield* printTable(
      "Per-turn overhead (addMessages + getContext)",
      method,
      [
        "store",
        "strategy",
        "runs/warm-up",
        "median",
        "p99",
        "add | context",
        "array median",
        "array p99",
        "x median",
        "x p99"
      ],
      rows.map((r) => [
        r.store,
        r.strategy,
        `${r.memory.runs}/${r.memory.warmup}`,
        ms(r.memory.median),
        ms(r.memory.p99),
        `${ms(r.addMessages.median)} | ${ms(r.getContext.median)}`,
        ms(r.baseline.median),
        ms(r.baseline.p99),
        times(r.ratioOfMedians),
        times(r.ratioOfP99)
      ]),
      [
        "x median / x p99: the memory's figure divided by the array's, measured in the same turns",
        "add | context: medians of the two parts of the turn (context includes awaitIdle on summarization rows)",
        "summarization + awaitIdle: incremental mode, scripted skill answering at once; the turn waits for " +
        "the background run"
      ]
    )
    const roundTrips = yield* roundTripsBench(stores, scaled(settings, 100, 30))
    return { method, rows, roundTrips }
  })
