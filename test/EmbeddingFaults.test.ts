/**
 * Hybrid recall with an embedding model at fault, on every store (memory, PGlite, PostgreSQL):
 * one that dies, is interrupted, answers fewer or more vectors than texts, vectors of another
 * length, NaN or Infinity, or hangs. Whatever it does, the write succeeds, `getContext` and
 * `searchMemory` serve lexical recall, the fault is counted (metric, `EmbeddingFailed`, one log
 * line per fault), no bad vector is stored, and `awaitIdle` returns once the clock passed the
 * embedding timeout by a second (the test clock: no real time is measured).
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import { assert, describe, layer } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Layer, Logger, Metric, Queue, TestClock } from "effect"
import type { ConversationId } from "../src/domain/ConversationId.js"
import { recalledText } from "../src/domain/internal/recall.js"
import type { EmbeddingFailed, MemoryEvent } from "../src/domain/MemoryEvent.js"

type EmbeddingFaultReason = EmbeddingFailed["reason"]
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as Metrics from "../src/strategies/internal/metrics.js"
import * as Recall from "../src/strategies/Recall.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { conceptVectors } from "./fixtures/conceptVectors.js"
import { freshId } from "./fixtures/messages.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

const embeddingModel = "faulty-embedding"
const queryTimeoutMillis = 1000
const batchTimeoutMillis = 2000

/** Words that mean the same thing share a dimension: the model's notion of meaning when it works. */
const concepts: ReadonlyArray<ReadonlyArray<string>> = [
  ["car", "automobile", "vehicle", "sedan"],
  ["broke", "breakdown", "stalled", "failed"],
  ["order", "total", "cost", "price"],
  ["delivery", "shipment", "courier", "parcel"]
]

const { vectorOf } = conceptVectors(concepts)

/** The identifier the planted turn and the question share: the faults of single vectors hit it. */
const marker = "ORD-2024-88417"
const answer = "$1,240.00"
const question = `What was the total for order ${marker} again?`

const chatter = (i: number) => [
  { role: "user" as const, content: `Turn ${i}: can you check the delivery status of the next shipment for me?` },
  { role: "assistant" as const, content: `Turn ${i}: the shipment is on its way and the delivery is planned as usual.` }
]

/** 60 messages (one batch of embeddings), the order's turn far out of the recent turns' view. */
const history = [
  ...[1, 2, 3].flatMap(chatter),
  { role: "user" as const, content: `And the order ${marker}, what did it cost?` },
  { role: "assistant" as const, content: `Order ${marker} came to ${answer}.` },
  ...Array.from({ length: 25 }, (_, i) => chatter(i + 4)).flat()
]

/** How a faulty model answers a call of `texts` (the model's `embedMany` under `EmbeddingModel.make`). */
type Answer = (texts: ReadonlyArray<string>) => Effect.Effect<Array<EmbeddingModel.Result>>

/** A model built with `EmbeddingModel.make`, recording each call's texts. */
const madeWith = (answer: Answer) => (calls: Queue.Queue<ReadonlyArray<string>>) =>
  EmbeddingModel.make({ embedMany: (texts) => Effect.zipRight(Queue.offer(calls, texts), answer(texts)) })

/** The good vectors of `texts`, but `bad` for those that name the marker. */
const withBad = (bad: (vector: Array<number>) => Array<number>): Answer => (texts) =>
  Effect.succeed(texts.map((text, index) => {
    const vector = vectorOf(text)
    return { index, embeddings: text.includes(marker) ? bad(vector) : vector }
  }))

interface Fault {
  readonly name: string
  readonly model: (calls: Queue.Queue<ReadonlyArray<string>>) => Effect.Effect<EmbeddingModel.Service>
  /** The reason the background batch's fault is reported with. */
  readonly index: EmbeddingFaultReason
  /** Whether the batch failed whole (every message stays pending), or only its bad vectors. */
  readonly whole: boolean
  /** The reason a query's fault is reported with; none when the query's vector is fine. */
  readonly query: EmbeddingFaultReason | undefined
}

const faults: ReadonlyArray<Fault> = [
  {
    // `EmbeddingModel.make` ends the requests of a resolver that died as interrupted.
    name: "dies (a defect, EmbeddingModel.make)",
    model: madeWith(() => Effect.die(new Error("the embedding model crashed"))),
    index: "interrupted",
    whole: true,
    query: "interrupted"
  },
  {
    name: "dies (a defect, a service of its own)",
    model: (calls) =>
      Effect.succeed(EmbeddingModel.EmbeddingModel.of({
        embed: (text) => Effect.zipRight(Queue.offer(calls, [text]), Effect.die(new Error("the model crashed"))),
        embedMany: (texts) => Effect.zipRight(Queue.offer(calls, texts), Effect.die(new Error("the model crashed")))
      })),
    index: "defect",
    whole: true,
    query: "defect"
  },
  {
    name: "is interrupted",
    model: madeWith(() => Effect.interrupt),
    index: "interrupted",
    whole: true,
    query: "interrupted"
  },
  {
    // `EmbeddingModel.make` leaves the requests it got no vector for unanswered: interrupted.
    name: "answers fewer vectors than texts (EmbeddingModel.make)",
    model: madeWith((texts) =>
      Effect.succeed(texts.slice(1).map((text, index) => ({ index, embeddings: vectorOf(text) })))
    ),
    index: "interrupted",
    whole: true,
    query: "interrupted"
  },
  {
    name: "answers fewer vectors than texts (a service of its own)",
    model: (calls) =>
      Effect.succeed(EmbeddingModel.EmbeddingModel.of({
        embed: (text) => Effect.zipRight(Queue.offer(calls, [text]), Effect.succeed([])),
        embedMany: (texts) => Effect.zipRight(Queue.offer(calls, texts), Effect.succeed(texts.slice(1).map(vectorOf)))
      })),
    index: "count",
    whole: true,
    query: "dimension"
  },
  {
    name: "answers more vectors than texts",
    model: (calls) =>
      Effect.succeed(EmbeddingModel.EmbeddingModel.of({
        embed: (text) => Effect.zipRight(Queue.offer(calls, [text]), Effect.succeed(vectorOf(text))),
        embedMany: (texts) =>
          Effect.zipRight(Queue.offer(calls, texts), Effect.succeed([...texts, "one more"].map(vectorOf)))
      })),
    index: "count",
    whole: true,
    query: undefined
  },
  {
    name: "answers a vector of another dimension",
    model: madeWith(withBad((vector) => vector.slice(0, 5))),
    index: "dimension",
    whole: false,
    query: "dimension"
  },
  {
    name: "answers NaN in a vector",
    model: madeWith(withBad((vector) => [Number.NaN, ...vector.slice(1)])),
    index: "non-finite",
    whole: false,
    query: "non-finite"
  },
  {
    name: "answers Infinity in a vector",
    model: madeWith(withBad((vector) => [...vector.slice(1), Number.POSITIVE_INFINITY])),
    index: "non-finite",
    whole: false,
    query: "non-finite"
  },
  {
    name: "hangs",
    model: madeWith(() => Effect.never),
    index: "timeout",
    whole: true,
    query: "timeout"
  }
]

/** The memory over `store`, hybrid recall over `model`. */
const memoryOver = (store: Store.Store, model: EmbeddingModel.Service) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(
      SummarizationStrategy.layer({
        kRawTurns: 2,
        tokenBudget: 1000,
        summaryTokenCap: 150,
        retries: 0,
        recall: "hybrid"
      })
    ),
    Layer.provideMerge(
      Recall.layerHybrid({
        model: embeddingModel,
        queryTimeout: queryTimeoutMillis,
        batchTimeout: batchTimeoutMillis
      }).pipe(Layer.provide(Layer.succeed(EmbeddingModel.EmbeddingModel, model)))
    ),
    Layer.provideMerge(ScriptedSkill.layer()),
    Layer.provideMerge(Store.layerFrom(store)),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const failuresAt = (stage: "index" | "query") =>
  Effect.map(Metric.value(Metric.tagged(Metrics.embeddingFailures, "stage", stage)), (state) => state.count)

/**
 * Runs `effect` (which calls the model once) to its end. A model that answers needs no time to
 * pass: the effect must end without the clock. One that hangs: once it was called, the test clock
 * passes `timeoutMillis` and one second more, and the effect must be done by then. Under the test
 * clock no other time passes, so an effect still waiting on the clock would never end. (Passing
 * the time to an answering model would race its answer, which comes back on a fiber of its own.)
 */
const withinTimeout = <A, E>(
  calls: Queue.Queue<ReadonlyArray<string>>,
  hangs: boolean,
  timeoutMillis: number,
  effect: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* Queue.take(calls)
    if (hangs) yield* TestClock.adjust(Duration.millis(timeoutMillis + 1000))
    return yield* Fiber.join(fiber)
  })

/** One fault on one store: everything the fault must not break, and how it is reported. */
const scenario = (store: Store.Store, fault: Fault, id: ConversationId) =>
  Effect.gen(function*() {
    const calls = yield* Queue.unbounded<ReadonlyArray<string>>()
    const model = yield* fault.model(calls)
    const hangs = fault.index === "timeout"
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning" || logLevel._tag === "Error") warnings.push(String(message))
    })
    yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      const indexBefore = yield* failuresAt("index")
      const queryBefore = yield* failuresAt("query")

      // The write succeeds; the background embedding ends within its timeout.
      const stored = yield* memory.addMessages(id, history)
      assert.strictEqual(stored.length, history.length)
      yield* withinTimeout(calls, hangs, batchTimeoutMillis, memory.awaitIdle(id))

      // No bad vector was stored: a failed batch stays pending whole; otherwise the messages with
      // a bad vector are kept without one, never found by meaning (and nothing scores NaN).
      const pending = yield* store.index.pendingEmbeddings(id, { model: embeddingModel, limit: 100 })
      assert.strictEqual(pending.length, fault.whole ? history.length : 0)
      const markerSeqs = stored.filter((m) => m.content.includes(marker)).map((m) => m.seq)
      const near = yield* store.index.searchEmbeddings(id, {
        model: embeddingModel,
        vector: vectorOf(`Order ${marker} came to ${answer}.`),
        before: 10_000,
        limit: 100
      })
      assert.strictEqual(near.length, fault.whole ? 0 : history.length - markerSeqs.length)
      for (const hit of near) {
        assert.isTrue(Number.isFinite(hit.score))
        assert.notInclude(markerSeqs, hit.seq)
      }
      assert.deepStrictEqual(
        yield* store.index.searchEmbeddings(id, {
          model: embeddingModel,
          vector: [1, 1, 1, 1, 1],
          before: 10_000,
          limit: 100
        }),
        []
      )

      // The context and the search answer lexically, within the query's timeout.
      const context = yield* withinTimeout(calls, hangs, queryTimeoutMillis, memory.getContext(id, { query: question }))
      assert.include(recalledText(context.recalled), answer)
      const found = yield* withinTimeout(calls, hangs, queryTimeoutMillis, memory.searchMemory(id, question))
      assert.include(recalledText(found), answer)

      // Counted, published, logged once per fault.
      const failed = Chunk.toReadonlyArray(yield* Queue.takeAll(events)).flatMap((event: MemoryEvent) =>
        event._tag === "EmbeddingFailed" && event.conversationId === id ? [event] : []
      )
      assert.deepStrictEqual(
        failed.map((event) => [event.stage, event.reason]),
        [["index", fault.index], ...(fault.query === undefined ? [] : [["query", fault.query], ["query", fault.query]])]
      )
      assert.strictEqual(failed[0]?.messages, fault.whole ? history.length : markerSeqs.length)
      assert.strictEqual((yield* failuresAt("index")) - indexBefore, 1)
      assert.strictEqual((yield* failuresAt("query")) - queryBefore, fault.query === undefined ? 0 : 2)
      const logged = warnings.filter((message) => /embedding|by meaning|background job/.test(message))
      assert.strictEqual(logged.length, failed.length, logged.join("\n"))
    }).pipe(
      Effect.provide(memoryOver(store, model)),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
  })

const faultSuite = <E>(name: string, storeLayer: Layer.Layer<Store.Ports, E>) =>
  layer(storeLayer, { timeout: Duration.minutes(2) })(`embedding faults: ${name}`, (it) => {
    for (const fault of faults) {
      it.scoped(
        `an embedding model that ${fault.name} fails no write and no context: lexical recall, counted`,
        () => Effect.flatMap(Store.get, (store) => scenario(store, fault, freshId("embedding-fault")))
      )
    }
  })

describe("embedding faults", () => {
  faultSuite("memory", MemoryStore.layer)
  faultSuite("pglite", pgliteRepository())
})

describePostgres("embedding faults on PostgreSQL", (url) => faultSuite("postgresql", repositoryLayer(url)))
