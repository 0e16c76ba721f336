/**
 * `searchMessages` latency against the length of one conversation: 1,000, 10,000 and 100,000
 * messages on each store (in memory, PGlite, and PostgreSQL when `DATABASE_URL` is set), all three
 * conversations in one store. The queries mix identifiers (alone, or inside a question) and
 * natural questions made of the conversation's common words. The index does the work, so the
 * latency should barely grow with the conversation: the goal is 100,000 / 1,000 ≤ 2. Also counted:
 * how often an identifier query's best hit is the message that holds the identifier.
 */
import { Context, DateTime, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { NewMessage } from "../src/domain/Message.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { type BenchStore, scaled, seedSummary, type Settings } from "./setup.js"
import { ms, printTable, ratio, timed, times } from "./stats.js"
import { generatedTurn, pick } from "./texts.js"

const lengths = [1000, 10_000, 100_000] as const

/** Messages per append while seeding. */
const seedBatch = 2000

/** Every `idEvery`-th message names an order of its own. */
const idEvery = 5

/** Hits asked for by each search (what recall asks for three turns). */
const limit = 9

const createdAt = DateTime.unsafeMake(0)

/** The order id of message `i` (0-based), when it names one. */
const orderOf = (i: number) => `ORD-${2020 + (i % 7)}-${String(100_000 + i * 7).padStart(7, "0")}`

/**
 * Message `i` (0-based) of a generated conversation: the turns of `generatedTurn` (15 to 180 words
 * of a small shared vocabulary), every fifth naming an order id, an amount and a date of its own.
 */
const message = (i: number): NewMessage => {
  const turn = generatedTurn(i >> 1)[i & 1]
  const details = i % idEvery === 0
    ? ` Order ${orderOf(i)} totals $${(pick(90_000, i) / 100 + 10).toFixed(2)}, due 2026-${
      String(1 + pick(12, i, 1)).padStart(2, "0")
    }-${String(1 + pick(28, i, 2)).padStart(2, "0")}.`
    : ""
  const content = `${turn?.content ?? ""}${details}`
  return { role: turn?.role ?? "user", content, metadata: {}, tokenCount: Math.ceil(content.length / 4), createdAt }
}

const words = (
  "delivery order warehouse dock slot invoice customer carrier pallet route schedule refund address window " +
  "driver tracking weather delay priority contract supplier quantity discount confirm tomorrow morning moved"
).split(" ")

const word = (...seed: ReadonlyArray<number>) => words[pick(words.length, ...seed)] ?? "delivery"

interface Query {
  readonly kind: "identifier" | "question"
  readonly text: string
  /** The seq of the message that holds the identifier asked about. */
  readonly expected?: number
}

/** Query `k` on a conversation of `length` messages: even ones name an order id, odd ones do not. */
const query = (length: number, k: number): Query => {
  if (k % 2 === 0) {
    const i = idEvery * pick(Math.floor(length / idEvery), length, k)
    const id = orderOf(i)
    const text = k % 4 === 0 ? id : `what was the total for ${id} again, and when is the ${word(k)} due?`
    return { kind: "identifier", text, expected: i + 1 }
  }
  return {
    kind: "question",
    text: `Can you remind me what we said about the ${word(k, 1)} ${word(k, 2)} and the ${word(k, 3)} for the ${
      word(k, 4)
    }?`
  }
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

interface Figures {
  readonly median: number
  readonly p95: number
}

const figures = (samples: ReadonlyArray<number>): Figures => {
  const sorted = [...samples].sort((x, y) => x - y)
  return { median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) }
}

interface LengthRow {
  readonly messages: number
  readonly seedSeconds: number
  readonly all: Figures
  readonly identifiers: Figures
  readonly questions: Figures
  /** Identifier queries whose best hit is the message holding the identifier, of those run. */
  readonly identifierTop1: number
  readonly meanHits: number
  /** `getContext` with the query (the default summarization strategy, recall on), in milliseconds. */
  readonly context: Figures
}

interface StoreRow {
  readonly store: string
  readonly byLength: ReadonlyArray<LengthRow>
  readonly ratiosOfMedians: { readonly "100000/1000": number; readonly "10000/1000": number }
  readonly contextRatio: number
}

/** Seeds one conversation per length, then runs the queries on each in turn, round after round. */
const searchByLength = (warmup: number, runs: number) =>
  Effect.gen(function*() {
    const store = yield* Store.get
    // The memory over the same store: a context asked with the query, as an agent asks it.
    const built = yield* Layer.build(
      ChatMemory.layer.pipe(
        Layer.provideMerge(SummarizationStrategy.layer()),
        Layer.provideMerge(ScriptedSkill.layer()),
        Layer.provideMerge(Store.layerFrom(store)),
        Layer.provideMerge(ApproximateTokenCounter.layer)
      )
    )
    const memory = Context.get(built, ChatMemoryService)
    const seeded = yield* Effect.forEach(lengths, (length) =>
      Effect.gen(function*() {
        const id = ConversationId.make(`recall-${length}-${randomUUID()}`)
        const [t] = yield* timed(Effect.gen(function*() {
          for (let start = 0; start < length; start += seedBatch) {
            const count = Math.min(seedBatch, length - start)
            yield* store.repository.appendMessages(id, Array.from({ length: count }, (_, k) => message(start + k)))
          }
        }))
        // A summarizer that keeps up: all but the newest 20 messages summarized, as after a real
        // replay, so that a context reads its window and recall, not a history that is behind.
        yield* seedSummary(
          store.summaries,
          id,
          length - 20,
          "The customer and the assistant discussed deliveries, orders and schedules."
        )
        return { id, length, seedSeconds: t / 1000 }
      }))
    const samples = seeded.map(() => ({
      context: new Array<number>(),
      all: new Array<number>(),
      identifiers: new Array<number>(),
      questions: new Array<number>()
    }))
    const top1 = seeded.map(() => ({ right: 0, asked: 0, hits: 0, runs: 0 }))
    for (let round = 0; round < warmup + runs; round++) {
      for (let j = 0; j < seeded.length; j++) {
        // The order rotates from round to round, so that a slow moment falls on every length alike.
        const k = (round + j) % seeded.length
        const conversation = seeded[k]
        if (conversation === undefined) continue
        const q = query(conversation.length, round)
        const [t, hits] = yield* timed(
          store.index.searchMessages(conversation.id, { text: q.text, before: conversation.length + 1, limit })
        )
        const [c] = yield* timed(memory.getContext(conversation.id, { query: q.text }))
        if (round < warmup) continue
        samples[k]?.context.push(c)
        const series = samples[k]
        const tally = top1[k]
        if (series === undefined || tally === undefined) continue
        series.all.push(t)
        ;(q.kind === "identifier" ? series.identifiers : series.questions).push(t)
        tally.hits += hits.length
        tally.runs += 1
        if (q.expected !== undefined) {
          tally.asked += 1
          if (hits[0]?.seq === q.expected) tally.right += 1
        }
      }
    }
    yield* Effect.forEach(seeded, ({ id }) => store.repository.deleteConversation(id))
    return seeded.map((conversation, k): LengthRow => {
      const series = samples[k]
      const tally = top1[k]
      return {
        messages: conversation.length,
        seedSeconds: conversation.seedSeconds,
        all: figures(series?.all ?? []),
        identifiers: figures(series?.identifiers ?? []),
        questions: figures(series?.questions ?? []),
        identifierTop1: tally === undefined || tally.asked === 0 ? Number.NaN : tally.right / tally.asked,
        meanHits: tally === undefined || tally.runs === 0 ? Number.NaN : tally.hits / tally.runs,
        context: figures(series?.context ?? [])
      }
    })
  })

/** Runs the recall benchmark on every store, prints it, and returns its JSON. */
export const recallBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const warmup = scaled(settings, 10, 4)
    const runs = scaled(settings, 50, 20)
    const results: Array<StoreRow> = []
    for (const store of stores) {
      const byLength = yield* Effect.provide(Effect.scoped(searchByLength(warmup, runs)), store.layer)
      const median = (n: number) => byLength.find((row) => row.messages === n)?.all.median
      const contextMedian = (n: number) => byLength.find((row) => row.messages === n)?.context.median
      results.push({
        contextRatio: ratio(contextMedian(100_000), contextMedian(1000)),
        store: store.name,
        byLength,
        ratiosOfMedians: {
          "100000/1000": ratio(median(100_000), median(1000)),
          "10000/1000": ratio(median(10_000), median(1000))
        }
      })
    }
    const method = `one conversation per length in one store, seeded in appends of ${seedBatch}; ${runs} searches ` +
      `(limit ${limit}) on each after ${warmup} warm-up, the lengths in turn in every round; half the queries name ` +
      `an order id (alone, or in a question), half are questions of the conversation's common words`
    yield* printTable(
      "searchMessages latency against conversation length",
      method,
      [
        "store",
        "messages",
        "seeding",
        "median",
        "p95",
        "median ids",
        "median questions",
        "id top-1",
        "x vs 1,000",
        "getContext+query",
        "x vs 1,000"
      ],
      results.flatMap((r) =>
        r.byLength.map((row) => [
          r.store,
          row.messages.toLocaleString("en-US"),
          `${row.seedSeconds.toFixed(1)} s`,
          ms(row.all.median),
          ms(row.all.p95),
          ms(row.identifiers.median),
          ms(row.questions.median),
          `${(100 * row.identifierTop1).toFixed(0)}%`,
          row.messages === 100_000
            ? times(r.ratiosOfMedians["100000/1000"])
            : row.messages === 10_000
            ? times(r.ratiosOfMedians["10000/1000"])
            : "",
          ms(row.context.median),
          row.messages === 100_000 ? times(r.contextRatio) : ""
        ])
      ),
      [
        "x vs 1,000: the median at that length divided by the median at 1,000 messages on the same store",
        "id top-1: identifier queries whose best hit is the message that holds the identifier",
        "getContext+query: the median of getContext(id, { query }) with the default summarization strategy " +
        "(recall on, budget 3000), all but the newest 20 messages summarized: window, search, whole turns"
      ]
    )
    return { method, warmup, runs, limit, stores: results }
  })
