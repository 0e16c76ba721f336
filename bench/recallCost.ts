/**
 * What recall costs: `getContext` with a query (the default summarization strategy, recall on)
 * against the plainest thing that does the same job, timed in the same loop on the same
 * conversation: a MiniSearch BM25 search of the conversation's messages (its top k) and a window
 * of the newest messages within the budget, over plain arrays. The conversations are the bundled
 * example conversations played one after the other, as often as it takes to reach 1,000 and 10,000
 * messages, and the queries their questions files' questions. On every store, with each counter (a
 * stored message is never tokenized again; the exact counter counts the block's frame); on the SQL
 * stores, also the round trips of each context.
 */
import { FileSystem } from "@effect/platform"
import { DateTime, Effect, Layer, Schema } from "effect"
import MiniSearch from "minisearch"
import { randomUUID } from "node:crypto"
import * as ConversationId from "../src/domain/ConversationId.js"
import { searchableText } from "../src/domain/internal/recall.js"
import { MessageInput, type NewMessage } from "../src/domain/Message.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { countedMemory } from "./roundTrips.js"
import { type BenchStore, budget, scaled, seedSummary, type Settings } from "./setup.js"
import { type Figure, fixed, interleaved, ms, printTable, ratio, times } from "./stats.js"

const lengths = [1000, 10_000] as const

/** Messages per append while seeding. */
const seedBatch = 2000

/** Hits the plain search keeps: as many turns as recall considers. */
const topK = 8

/**
 * Tokens left unsummarized at the end of each conversation (from a user message on): a summarizer
 * that keeps up leaves between a quarter and nine tenths of the room for turns.
 */
const unsummarized = 1400

const counters: ReadonlyArray<readonly [string, TokenCounter.Service]> = [
  ["approximate", ApproximateTokenCounter.make],
  ["exact o200k", ExactTokenCounter.make]
]

const examples = ["conversation", "offsite", "trip"] as const

const QuestionsFile = Schema.parseJson(
  Schema.Struct({ questions: Schema.Array(Schema.Struct({ question: Schema.String })) })
)
const decodeMessage = Schema.decodeUnknown(Schema.parseJson(MessageInput))

/** The example conversations' messages after their leading system messages, and their questions. */
const loadExamples = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const messages: Array<MessageInput> = []
  const questions: Array<string> = []
  for (const name of examples) {
    const lines = (yield* fs.readFileString(`examples/${name}.jsonl`)).split("\n").filter((l) => l.trim() !== "")
    let leading = true
    for (const line of lines) {
      const message = yield* decodeMessage(line)
      leading = leading && message.role === "system"
      if (!leading) messages.push(message)
    }
    const file = yield* Schema.decodeUnknown(QuestionsFile)(yield* fs.readFileString(`examples/${name}.questions.json`))
    questions.push(...file.questions.map((q) => q.question))
  }
  return { messages, questions }
})

/** The baseline over plain arrays: a MiniSearch BM25 index of the messages, and the newest messages within the budget. */
const plainRecall = (messages: ReadonlyArray<NewMessage>) => {
  const index = new MiniSearch<{ readonly id: number; readonly text: string }>({ fields: ["text"] })
  index.addAll(messages.map((m, id) => ({ id, text: searchableText(m) })))
  return (text: string) => {
    const hits = index.search(text).slice(0, topK).map((hit) => messages[hit.id])
    const window: Array<NewMessage> = []
    let used = 0
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]
      if (m === undefined || used + m.tokenCount > budget) break
      used += m.tokenCount
      window.push(m)
    }
    return { hits, window: window.reverse() }
  }
}

interface Row {
  readonly store: string
  readonly counter: string
  readonly messages: number
  readonly context: Figure
  readonly plain: Figure
  readonly ratioOfMedians: number
  /** Statements per context on the SQL stores (null in memory): the most, and the mean. */
  readonly roundTrips: { readonly max: number; readonly mean: number } | null
  readonly meanRecalledTurns: number
}

/** Seeds one conversation per length in a fresh store, then times contexts with a query against the baseline. */
const measure = (
  store: BenchStore,
  counterName: string,
  counter: TokenCounter.Service,
  warmup: number,
  runs: number,
  source: { readonly messages: ReadonlyArray<MessageInput>; readonly questions: ReadonlyArray<string> }
) =>
  Effect.gen(function*() {
    const { memory, statements, storage } = yield* countedMemory(store, Layer.succeed(TokenCounter, counter))
    const rows: Array<Row> = []
    for (const length of lengths) {
      const id = ConversationId.make(`recall-cost-${length}-${randomUUID()}`)
      const createdAt = yield* DateTime.now
      const seeded: Array<NewMessage> = []
      for (let i = 0; i < length; i++) {
        const input = source.messages[i % source.messages.length]
        if (input === undefined) break
        const metadata = input.metadata ?? {}
        const tokenCount = yield* counter.countMessage({ content: input.content, metadata })
        seeded.push({ role: input.role, content: input.content, metadata, tokenCount, createdAt })
      }
      for (let start = 0; start < seeded.length; start += seedBatch) {
        yield* storage.repository.appendMessages(id, seeded.slice(start, start + seedBatch))
      }
      // A summarizer that keeps up: all but the newest turns summarized, up to a user message.
      let cursor = seeded.length
      let tail = 0
      while (cursor > 1 && (tail < unsummarized || seeded[cursor - 1]?.role !== "user")) {
        tail += seeded[cursor - 1]?.tokenCount ?? 0
        cursor -= 1
      }
      cursor -= 1
      yield* seedSummary(
        storage.summaries,
        id,
        cursor,
        "The client and the assistant planned deliveries, events and trips, with their orders and dates."
      )
      const plain = plainRecall(seeded)
      const trips: Array<number> = []
      let recalled = 0
      const [context, baseline] = yield* interleaved(warmup, runs, [
        (i) =>
          Effect.gen(function*() {
            const text = source.questions[i % source.questions.length] ?? ""
            statements.fiber = yield* Effect.fiberId
            const before = statements.value
            const start = performance.now()
            const result = yield* memory.getContext(id, { query: text })
            const elapsed = performance.now() - start
            if (i >= warmup) {
              trips.push(statements.value - before)
              recalled += result.recalled.length
            }
            return elapsed
          }),
        (i) =>
          Effect.sync(() => {
            const text = source.questions[i % source.questions.length] ?? ""
            const start = performance.now()
            plain(text)
            return performance.now() - start
          })
      ])
      if (context === undefined || baseline === undefined) continue
      rows.push({
        store: store.name,
        counter: counterName,
        messages: length,
        context,
        plain: baseline,
        ratioOfMedians: ratio(context.median, baseline.median),
        roundTrips: store.over === undefined
          ? null
          : { max: Math.max(...trips), mean: trips.reduce((a, b) => a + b, 0) / Math.max(1, trips.length) },
        meanRecalledTurns: recalled / Math.max(1, runs)
      })
      yield* storage.repository.deleteConversation(id)
    }
    return rows
  })

/** Runs the recall cost benchmark on every store, prints it, and returns its JSON. */
export const recallCostBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const source = yield* loadExamples
    const rows: Array<Row> = []
    for (const store of stores) {
      const inMemory = store.over === undefined
      const warmup = scaled(settings, inMemory ? 100 : 20, 5)
      const runs = scaled(settings, inMemory ? 1000 : 200, 20)
      for (const [name, counter] of counters) {
        rows.push(...yield* Effect.scoped(measure(store, name, counter, warmup, runs, source)))
      }
    }
    const method = `one conversation per length (the example conversations played in turn, ${examples.join(", ")}, ` +
      `leading system messages aside), summarized up to a user message that leaves about ${unsummarized} tokens ` +
      `after it; getContext(id, { query }) with the default summarization strategy (budget ${budget}, recall ` +
      `lexical 0.25) and the baseline alternate in every round, on the same queries (the ${source.questions.length} ` +
      `questions of the examples' questions files, in turn); runs after warm-up as shown`
    yield* printTable(
      "Recall's cost: getContext with a query against a plain BM25 search + window",
      method,
      [
        "store",
        "counter",
        "messages",
        "runs/warm-up",
        "getContext+query",
        "p99",
        "BM25 top-k + window",
        "p99",
        "x median",
        "round trips",
        "turns recalled"
      ],
      rows.map((r) => [
        r.store,
        r.counter,
        r.messages.toLocaleString("en-US"),
        `${r.context.runs}/${r.context.warmup}`,
        ms(r.context.median),
        ms(r.context.p99),
        ms(r.plain.median),
        ms(r.plain.p99),
        times(r.ratioOfMedians),
        r.roundTrips === null ? "-" : `${r.roundTrips.max} (mean ${fixed(r.roundTrips.mean, 2)})`,
        fixed(r.meanRecalledTurns, 1)
      ]),
      [
        `BM25 top-k + window: MiniSearch's own search (BM25) of every message, its top ${topK} hits, and the newest ` +
        `messages within ${budget} tokens, over plain arrays in this process (the same on every store's rows)`,
        "round trips: statements a context sends to the database (the window with the conversation's settings, the " +
        "search, the hits' turns), counted by a SqlClient that wraps the store's connections: the most, and the mean"
      ]
    )
    return { method, topK, rows }
  })
