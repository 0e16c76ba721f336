/**
 * Hybrid recall through the real `@effect/ai-openai` embedding client against a local server that
 * speaks the embeddings endpoint: messages are embedded in the background, in batches; a query
 * finds by meaning what shares no word with it; and an embedding model that fails or hangs never
 * fails a write or a context (lexical recall is served, the failure counted).
 */
import { EmbeddingModel } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import {
  Chunk,
  ConfigProvider,
  type Duration,
  Effect,
  Either,
  Layer,
  Metric,
  Queue,
  Redacted,
  Schema,
  TestClock
} from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { recalledText } from "../src/domain/internal/recall.js"
import * as UserId from "../src/domain/UserId.js"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import * as OpenAiEmbeddings from "../src/layers/embeddings/OpenAiEmbeddings.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { MessageIndex } from "../src/services/MessageIndex.js"
import { UserMemoryService } from "../src/services/UserMemoryService.js"
import * as Metrics from "../src/strategies/internal/metrics.js"
import { fuse } from "../src/strategies/internal/recall/hybrid.js"
import * as Recall from "../src/strategies/Recall.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { conceptVectors } from "./fixtures/conceptVectors.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { hybridMemory as hybridLayers, summarizingMemory } from "./fixtures/layers.js"

const embeddingModel = "fake-embedding-small"

/** Words that mean the same thing share a dimension: the fake model's notion of meaning. */
const concepts: ReadonlyArray<ReadonlyArray<string>> = [
  ["car", "automobile", "vehicle", "sedan"],
  ["broke", "breakdown", "stalled", "failed"],
  ["refund", "reimbursement", "repaid"],
  ["allergy", "allergic", "peanut", "nuts"],
  ["delivery", "shipment", "courier", "parcel"],
  ["status", "tracking", "check"]
]

/** The fake model's vector of a text: its concepts, and a faint trace of every other word. */
const { vectorOf } = conceptVectors(concepts)

const EmbeddingRequest = Schema.parseJson(Schema.Struct({
  model: Schema.String,
  input: Schema.Union(Schema.String, Schema.Array(Schema.String))
}))

/** The texts of an embeddings request (empty for any other request). */
const inputsOf = (request: Fake.RecordedRequest): ReadonlyArray<string> =>
  request.url !== "/v1/embeddings" ? [] : Either.match(Schema.decodeUnknownEither(EmbeddingRequest)(request.rawBody), {
    onLeft: () => [],
    onRight: ({ input }) => (typeof input === "string" ? [input] : input)
  })

/** The embeddings endpoint as OpenAI answers it, over `vectorOf`. */
const embeddings = (request: Fake.RecordedRequest): Fake.Reply => {
  const inputs = inputsOf(request)
  return {
    _tag: "Json",
    status: 200,
    body: {
      object: "list",
      data: inputs.map((text, index) => ({ object: "embedding", index, embedding: vectorOf(text) })),
      model: embeddingModel,
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length }
    }
  }
}

/** What the hybrid index needs: a store and an embedding model (never called here). */
const hybridDependencies = Layer.merge(
  MemoryStore.layer,
  Layer.effect(EmbeddingModel.EmbeddingModel, EmbeddingModel.make({ embedMany: () => Effect.succeed([]) }))
)

/** The summarizing memory (scripted summarizer) with hybrid recall over the fake server. */
const hybridMemory = (script: Fake.Script, queryTimeout: Duration.DurationInput = "2 seconds") =>
  Layer.unwrapEffect(
    Effect.map(Fake.FakeOpenAi, (fake) =>
      hybridLayers({ kRawTurns: 2, tokenBudget: 1000, summaryTokenCap: 150, retries: 0 }, {
        model: embeddingModel,
        queryTimeout
      }).pipe(
        Layer.provide(
          OpenAiEmbeddings.layer({ apiKey: Redacted.make(Fake.apiKey), apiUrl: fake.apiUrl, model: embeddingModel })
        )
      ))
  ).pipe(Layer.provideMerge(Fake.layer(script)))

const chatter = (i: number) => [
  { role: "user" as const, content: `Turn ${i}: can you check the delivery status of the next shipment for me?` },
  { role: "assistant" as const, content: `Turn ${i}: the shipment is on its way and the delivery is planned as usual.` }
]

/** An early turn that a later question names only by meaning, and one it names by an id. */
const planted = [
  { role: "user" as const, content: "My sedan stalled on the motorway this morning." },
  { role: "assistant" as const, content: "Sorry to hear that; a tow truck is on its way to junction 14." },
  { role: "user" as const, content: "And the order ORD-2024-88417, what did it cost?" },
  { role: "assistant" as const, content: "Order ORD-2024-88417 came to $1,240.00." }
]

const conversation = (id: ConversationId.ConversationId, wait: boolean) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = 1; i <= 3; i++) yield* memory.addMessages(id, chatter(i))
    yield* memory.addMessages(id, planted)
    for (let i = 4; i <= 40; i++) {
      yield* memory.addMessages(id, chatter(i))
      if (wait) yield* memory.awaitIdle(id)
    }
  })

const meaningId = ConversationId.make("hybrid-meaning")
const batchesId = ConversationId.make("hybrid-batches")
const downId = ConversationId.make("hybrid-down")
const hungId = ConversationId.make("hybrid-hung")
const liveId = ConversationId.make("hybrid-live")
const byMeaning = "Where did the automobile break down?"
const byId = "What was the total for order ORD-2024-88417 again?"

const failuresAt = (stage: "index" | "query") =>
  Effect.map(Metric.value(Metric.tagged(Metrics.embeddingFailures, "stage", stage)), (state) => state.count)

describe("hybrid recall", () => {
  it.scoped("a question that shares no word with its answer finds it by meaning; lexical recall does not", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation(meaningId, true)
      const hybrid = yield* memory.getContext(meaningId, { query: byMeaning })
      assert.include(recalledText(hybrid.recalled), "junction 14")
      assert.isAtMost(hybrid.tokenCount, 1000)
      // The same index searched by words only: the question's words are not in the answer's turn.
      const store = yield* Store.get
      const lexical = yield* store.index.searchMessages(meaningId, {
        text: byMeaning,
        before: 1000,
        limit: 10,
        meaning: false
      })
      const stalled = (yield* store.repository.listMessages(meaningId, {})).find((m) => m.content.includes("stalled"))
      assert.isDefined(stalled)
      assert.isFalse(lexical.some((hit) => hit.seq === stalled?.seq))
      // searchMemory (and the recall toolkit over it) searches the same way.
      const found = yield* memory.searchMemory(meaningId, byMeaning)
      assert.include(recalledText(found.slice(0, 1)), "junction 14")
      // Identifiers are still found by their words.
      const exact = yield* memory.getContext(meaningId, { query: byId })
      assert.include(recalledText(exact.recalled), "$1,240.00")
    }).pipe(Effect.provide(hybridMemory(embeddings))))

  it.scoped("a new conversation of a user recalls by meaning what the user said in an earlier one, never another's", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const users = yield* UserMemoryService
      const [user, stranger] = [UserId.UserId.make("hybrid-user"), UserId.UserId.make("hybrid-user-stranger")]
      const earlier = ConversationId.make("hybrid-user-earlier")
      yield* memory.addMessages(earlier, [...chatter(1), ...planted, ...chatter(2)], { userId: user })
      yield* memory.addMessages(ConversationId.make("hybrid-user-theirs"), planted, { userId: stranger })
      yield* memory.awaitIdle()
      const fresh = yield* memory.getContext(ConversationId.make("hybrid-user-new"), { query: byMeaning, userId: user })
      const found = fresh.recalled.find((turn) => recalledText([turn]).includes("junction 14"))
      assert.strictEqual(found?.conversationId, earlier)
      // By words alone, the user's conversations hold no answer to the question.
      const store = yield* Store.get
      const stalled = (yield* store.repository.listMessages(earlier, {})).find((m) => m.content.includes("stalled"))
      const lexical = yield* store.users.searchMessages(user, { text: byMeaning, limit: 10, meaning: false })
      assert.isFalse(lexical.some((hit) => hit.conversationId === earlier && hit.seq === stalled?.seq))
      // The user's own search finds it the same way.
      const searched = yield* users.search(user, byMeaning)
      assert.include(recalledText(searched.slice(0, 1)), "junction 14")
      assert.isTrue(searched.every((turn) => turn.conversationId === earlier))
      // A user with no conversation recalls nothing, by meaning or by words.
      const nobody = yield* memory.getContext(ConversationId.make("hybrid-user-nobody"), {
        query: byMeaning,
        userId: UserId.UserId.make("hybrid-user-nobody")
      })
      assert.isEmpty(nobody.recalled)
    }).pipe(Effect.provide(hybridMemory(embeddings))))

  it.scoped("messages are embedded in the background, in batches, under the configured model", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      yield* conversation(batchesId, false)
      yield* memory.awaitIdle(batchesId)
      const requests = (yield* fake.requests).filter((r) => r.url === "/v1/embeddings")
      const texts = requests.flatMap(inputsOf)
      const store = yield* Store.get
      const stored = (yield* store.repository.listMessages(batchesId, {})).filter((m) => m.role !== "summary")
      // Every message was embedded once, in fewer requests than messages.
      assert.strictEqual(texts.length, stored.length)
      assert.deepStrictEqual(new Set(texts), new Set(stored.map((m) => m.content)))
      assert.isBelow(requests.length, stored.length)
      for (const request of requests) assert.include(request.rawBody, `"model":"${embeddingModel}"`)
      assert.deepStrictEqual(
        yield* store.index.pendingEmbeddings(batchesId, { model: embeddingModel, limit: 10 }),
        []
      )
    }).pipe(Effect.provide(hybridMemory(embeddings))))

  it.scoped("a failing embedding model fails neither writes nor contexts: lexical recall, failures counted", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const indexBefore = yield* failuresAt("index")
      const queryBefore = yield* failuresAt("query")
      yield* conversation(downId, true)
      const context = yield* memory.getContext(downId, { query: byId })
      assert.include(recalledText(context.recalled), "$1,240.00")
      assert.isAbove(yield* failuresAt("index"), indexBefore)
      assert.isAbove(yield* failuresAt("query"), queryBefore)
      // Nothing was lost: every message is stored, and still pending for the model's return.
      const store = yield* Store.get
      const pending = yield* store.index.pendingEmbeddings(downId, { model: embeddingModel, limit: 100 })
      assert.strictEqual(pending[0]?.seq, 1)
      assert.strictEqual((yield* store.repository.getConversation(downId)).messageCount, 2 * 40 + 4)
    }).pipe(Effect.provide(hybridMemory(() => Fake.error(500, "embeddings are down")))))

  it.scoped("a failing model leaves a user's search by words: the user's hits, the failure counted", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const users = yield* UserMemoryService
      const user = UserId.UserId.make("hybrid-user-down")
      const earlier = ConversationId.make("hybrid-user-down-earlier")
      yield* memory.addMessages(earlier, [...chatter(1), ...planted], { userId: user })
      yield* memory.awaitIdle()
      const events = yield* memory.subscribe
      const queryBefore = yield* failuresAt("query")
      // A new conversation's context, and the user's own search, made for no conversation.
      const fresh = yield* memory.getContext(ConversationId.make("hybrid-user-down-new"), { query: byId, userId: user })
      assert.include(recalledText(fresh.recalled), "$1,240.00")
      const searched = yield* users.search(user, byId)
      assert.include(recalledText(searched.slice(0, 1)), "$1,240.00")
      assert.strictEqual(yield* failuresAt("query"), queryBefore + 2)
      // Published for the conversation the context was made for; the user's search names none.
      const published = Chunk.toArray(yield* Queue.takeAll(events)).flatMap((event) =>
        event._tag === "EmbeddingFailed" ? [[event.conversationId, event.stage]] : []
      )
      assert.deepStrictEqual(
        published,
        [["hybrid-user-down-new", "query"]]
      )
    }).pipe(Effect.provide(hybridMemory(() => Fake.error(500, "embeddings are down")))))

  it.scopedLive("a model that never answers holds up neither writes nor contexts", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const queryBefore = yield* failuresAt("query")
      // No waiting for the background: every embedding call hangs. The summarizer answers at once:
      // once its folds land (recall's room comes from turns the summary covers), the context is asked.
      yield* conversation(hungId, false)
      yield* Effect.yieldNow().pipe(
        Effect.zipRight(Effect.map(memory.getContext(hungId), (plain) => plain.turnsOmitted === 0)),
        Effect.repeat({ until: (caughtUp) => caughtUp, times: 1000 })
      )
      const context = yield* memory.getContext(hungId, { query: byId })
      assert.include(recalledText(context.recalled), "$1,240.00")
      assert.strictEqual(yield* failuresAt("query"), queryBefore + 1)
    }).pipe(Effect.provide(hybridMemory(() => ({ _tag: "Never" }), "300 millis"))))

  it.scoped("hybrid recall without a hybrid index fails the layer, naming options.recall and the way to one", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(SummarizationStrategy.layer({ recall: "hybrid" }).pipe(Layer.provide(summarizingMemory())))
      )
      assert.strictEqual(error._tag, "DataValidationError")
      assert.include(error.message, "options.recall")
      assert.include(error.message, "Recall.layerHybrid")
      assert.include(error.message, "EmbeddingModel")
    }))

  it.scoped("the hybrid index's invalid options fail its layer, naming the option", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(Recall.layerHybrid({ queryTimeout: 0 }).pipe(Layer.provide(hybridDependencies)))
      )
      assert.strictEqual(error._tag, "DataValidationError")
      assert.include(error.message, "options.queryTimeout")
    }))

  it.effect("the hybrid index searches by meaning unless asked for words only", () =>
    Effect.gen(function*() {
      const index = yield* MessageIndex
      yield* conversation(meaningId, true)
      const messages = yield* Effect.flatMap(Store.get, (store) => store.repository.listMessages(meaningId, {}))
      const seqOf = (text: string) => messages.find((m) => m.content.includes(text))?.seq
      const search = (text: string, meaning?: boolean) =>
        Effect.map(
          index.searchMessages(meaningId, { text, before: Number.MAX_SAFE_INTEGER, limit: 5, meaning }),
          (hits) => hits.map((hit) => hit.seq)
        )
      assert.include(yield* search(byMeaning), seqOf("stalled"))
      assert.notInclude(yield* search(byMeaning, false), seqOf("stalled"))
      // An identifier is found by its words either way.
      assert.include(yield* search(byId, false), seqOf("came to $1,240.00"))
    }).pipe(Effect.provide(hybridMemory(embeddings))))

  it.effect("MEMORY_RECALL=hybrid needs a model server, named in the error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ChatMemoryConfig.config).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MEMORY_RECALL", "hybrid"]])))
      )
      assert.include(String(error), "MEMORY_RECALL")
      assert.include(String(error), "OPENAI_API_KEY")
      const options = yield* ChatMemoryConfig.config.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(
          new Map([
            ["MEMORY_RECALL", "hybrid"],
            ["OPENAI_BASE_URL", "http://127.0.0.1:9/v1"],
            ["MEMORY_EMBEDDING_MODEL", "nomic-embed-text"]
          ])
        ))
      )
      assert.strictEqual(options.recall, "hybrid")
      assert.strictEqual(options.embeddingModel, "nomic-embed-text")
      assert.deepStrictEqual(
        options.embeddings?._tag === "openai" ? options.embeddings.model : undefined,
        "nomic-embed-text"
      )
    }))

  it.scoped("ChatMemoryLive composes hybrid recall from typed options", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const live = ChatMemoryLive.layer({
        store: { _tag: "memory" },
        recall: "hybrid",
        kRawTurns: 2,
        tokenBudget: 1000,
        summaryTokenCap: 150,
        embeddings: { _tag: "openai", apiUrl: fake.apiUrl, apiKey: Redacted.make(Fake.apiKey), model: embeddingModel }
      })
      yield* Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        yield* conversation(liveId, true)
        const context = yield* memory.getContext(liveId, { query: byMeaning })
        assert.include(recalledText(context.recalled), "junction 14")
      }).pipe(Effect.provide(live))
    }).pipe(Effect.provide(Fake.layer(embeddings))))

  it.scoped("embeddingUserScanLimit bounds a user's search by meaning to the newest messages", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const recalledFromEarlier = (embeddingUserScanLimit: number | undefined) =>
        Effect.gen(function*() {
          const memory = yield* ChatMemoryService
          const user = UserId.UserId.make("hybrid-scan-user")
          const earlier = ConversationId.make("hybrid-scan-earlier")
          yield* memory.addMessages(earlier, [...chatter(1), ...planted], { userId: user })
          // A later conversation of ten messages, said an hour after.
          yield* TestClock.adjust("1 hour")
          yield* memory.addMessages(
            ConversationId.make("hybrid-scan-later"),
            [1, 2, 3, 4, 5].flatMap(chatter),
            { userId: user }
          )
          yield* memory.awaitIdle()
          const context = yield* memory.getContext(ConversationId.make("hybrid-scan-new"), {
            query: byMeaning,
            userId: user
          })
          return context.recalled.some((turn) =>
            turn.conversationId === earlier && recalledText([turn]).includes("junction 14")
          )
        }).pipe(Effect.provide(ChatMemoryLive.layer({
          store: { _tag: "memory" },
          recall: "hybrid",
          embeddings: {
            _tag: "openai",
            apiUrl: fake.apiUrl,
            apiKey: Redacted.make(Fake.apiKey),
            model: embeddingModel
          },
          embeddingUserScanLimit
        })))
      // By default the earlier conversation is within the scan; with room for the later one's ten
      // messages only, it is not, and its words do not answer the question.
      assert.isTrue(yield* recalledFromEarlier(undefined))
      assert.isFalse(yield* recalledFromEarlier(10))
    }).pipe(Effect.provide(Fake.layer(embeddings))))

  it("reciprocal rank fusion favours what both rankings hold, then rank", () => {
    const lexical = [{ seq: 5, score: 9 }, { seq: 7, score: 3 }, { seq: 2, score: 1 }]
    const semantic = [{ seq: 9, score: 0.9 }, { seq: 2, score: 0.8 }]
    assert.deepStrictEqual(fuse([lexical, semantic], 10).map((hit) => hit.seq), [2, 9, 5, 7])
    assert.deepStrictEqual(fuse([lexical, semantic], 2).map((hit) => hit.seq), [2, 9])
    assert.deepStrictEqual(fuse([lexical, []], 10).map((hit) => hit.seq), [5, 7, 2])
  })
})
