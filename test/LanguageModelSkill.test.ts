import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Queue, TestClock } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { groupTurns } from "../src/domain/internal/turns.js"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as Prompts from "../src/layers/skills/Prompts.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import type * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import type { MemoryManagementStrategy } from "../src/services/MemoryManagementStrategy.js"
import type { SkillService } from "../src/services/SkillService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import type { TokenCounter } from "../src/services/TokenCounter.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

// As in SummarizationStrategy.test: a turn takes 42 tokens; the eighth turn crosses the threshold
// and the five oldest turns are folded.
const options = {
  kRawTurns: 2,
  tokenBudget: 200,
  chunkSummarizeThreshold: 300,
  summaryTokenCap: 60,
  retries: 0,
  retryBaseDelay: 0
} as const

const user = (i: number) =>
  `Question ${String(i).padStart(2, "0")} about order ORD-${String(i).padStart(4, "0")}.`.padEnd(36, ".")
const answer = (i: number) => `Answer ${String(i).padStart(2, "0")}: shipped to Lyon.`.padEnd(100, ".")
const turn = (i: number) => [
  { role: "user" as const, content: user(i) },
  { role: "assistant" as const, content: answer(i) }
]
const c = ConversationId.make("c")
/** A summary far over the cap of 60 tokens. */
const long = Array.from({ length: 12 }, (_, i) => `Order ORD-${i} was shipped to Lyon on time.`).join(" ")

/** The memory with a strategy over the real OpenAI skills talking to the fake server. */
const openAiMemory = <E>(
  strategy: Layer.Layer<MemoryManagementStrategy, E, Store.Ports | SkillService | TokenCounter>,
  script: Fake.Script
) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(strategy),
    Layer.provideMerge(Fake.skillLayer(script)),
    Layer.provideMerge(MemoryStore.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const addTurns = (from: number, to: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = from; i <= to; i++) yield* memory.addMessages("c", turn(i))
  })

/** Takes events until one with `tag` arrives. */
const waitFor = (events: Queue.Dequeue<MemoryEvent>, tag: MemoryEvent["_tag"]) =>
  Effect.gen(function*() {
    while (true) {
      const event = yield* Queue.take(events)
      if (event._tag === tag) return event
    }
  })

/** After a failed run: nothing lost, the state as it was, the context served by the plain window. */
const assertUnchanged = (messages: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const repository = yield* SummaryStore
    const state = yield* repository.getSummaryState(c)
    assert.deepStrictEqual([state.cursor, state.version, state.narrative, state.facts], [0, 0, "", []])
    assert.deepStrictEqual(yield* repository.listSummarizations(c), [])
    assert.strictEqual((yield* memory.getMessages("c")).length, messages)
    const context = yield* memory.getContext("c")
    assert.isNull(context.summary)
    assert.deepStrictEqual(context.facts, [])
    assert.isAbove(context.turnsShown, 0)
    assert.isAtMost(context.tokenCount, options.tokenBudget)
    assert.strictEqual(context.messagesOmitted + context.recent.length, messages)
  })

const failedDetail = (event: MemoryEvent) => (event._tag === "SummarizationFailed" ? event.detail : "")

describe("LanguageModelSkill over the real OpenAI client and a local Responses API server", () => {
  it.effect("summarize sends the summarizer model and the exact EXISTING_SUMMARY / NEW_TURNS text; usage lands in the record", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const fake = yield* Fake.FakeOpenAi
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      const [request, ...rest] = yield* fake.requests
      assert.strictEqual(rest.length, 0)
      assert.strictEqual(request?.url, "/v1/responses")
      assert.strictEqual(request?.body.model, Fake.model)
      assert.strictEqual(request?.headers.authorization, `Bearer ${Fake.apiKey}`)
      assert.strictEqual(request?.body.text?.format?.type, "text")
      const stored = yield* memory.getMessages("c")
      const expected = Prompts.summaryInput({
        existingSummary: { _tag: "None" },
        turns: groupTurns(stored.slice(0, 10)).turns
      })
      assert.deepStrictEqual(request === undefined ? [] : Fake.userTexts(request), [expected])
      assert.isTrue(expected.startsWith("=== EXISTING_SUMMARY ===\nNONE\n=== END_EXISTING_SUMMARY ===\n\n"))
      assert.include(expected, `=== NEW_TURNS ===\nTurn 1:\nUser: ${user(1)}\nAssistant: ${answer(1)}\n\nTurn 2:`)
      assert.include(request === undefined ? "" : Fake.systemText(request) ?? "", "running summary")

      const state = yield* repository.getSummaryState(c)
      assert.deepStrictEqual([state.cursor, state.narrative], [10, "Orders 1 to 5 shipped to Lyon."])
      const [record] = yield* repository.listSummarizations(c)
      assert.deepStrictEqual(
        [record?.skillId, record?.model, record?.inputTokens, record?.outputTokens, record?.fromSeq, record?.toSeq],
        ["openai/summarize@5", Fake.model, 321, 17, 1, 10]
      )
      const context = yield* memory.getContext("c")
      assert.strictEqual(context.summary, "Orders 1 to 5 shipped to Lyon.")
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer(options),
      Fake.text("  Orders 1 to 5 shipped to Lyon.\n", { input: 321, output: 17 })
    ))))

  it.effect("the next run folds the existing summary: it is sent back in EXISTING_SUMMARY", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      for (let i = 1; i <= 14; i++) {
        yield* addTurns(i, i)
        yield* memory.awaitIdle("c")
      }
      const requests = yield* fake.requests
      assert.isAtLeast(requests.length, 2)
      const second = requests[1] === undefined ? [] : Fake.userTexts(requests[1])
      assert.isTrue(second[0]?.startsWith("=== EXISTING_SUMMARY ===\nsummary 1\n=== END_EXISTING_SUMMARY ==="))
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer(options),
      (request, n) => Fake.text(`summary ${n}`)(request, n)
    ))))

  it.effect("a summary over the cap is asked for again: the previous answer, then the overrun stated", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const fake = yield* Fake.FakeOpenAi
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      const [first, second, ...rest] = yield* fake.requests
      assert.strictEqual(rest.length, 0)
      const input = second?.body.input ?? []
      assert.deepStrictEqual(input.map((message) => message.role), ["system", "user", "assistant", "user"])
      // The same input as the first call, then its answer, then the overrun in words.
      assert.deepStrictEqual(input.slice(0, 2), first?.body.input?.slice(0, 2))
      const answered = input[2]?.content
      assert.include(typeof answered === "string" ? answered : answered?.map((part) => part.text).join(""), long)
      const followUp = second === undefined ? [] : Fake.userTexts(second)
      assert.match(followUp[1] ?? "", /^That summary is \d+ tokens long: \d+ over the limit of \d+ tokens\./)
      const state = yield* repository.getSummaryState(c)
      assert.strictEqual(state.narrative, "Orders 1 to 5 shipped to Lyon.")
      const [record] = yield* repository.listSummarizations(c)
      assert.deepStrictEqual([record?.summaryTruncated, record?.inputTokens, record?.outputTokens], [false, 20, 10])
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer(options),
      (request, n) => Fake.text(n === 1 ? long : "Orders 1 to 5 shipped to Lyon.")(request, n)
    ))))

  it.effect("extract facts sends a strict JSON schema; the structured output decodes into facts, merged by key", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const fake = yield* Fake.FakeOpenAi
      for (let i = 1; i <= 14; i++) {
        yield* addTurns(i, i)
        yield* memory.awaitIdle("c")
      }
      const [first, second] = yield* fake.requests
      assert.strictEqual(first?.body.model, Fake.model)
      assert.deepStrictEqual(
        [first?.body.text?.format?.type, first?.body.text?.format?.name, first?.body.text?.format?.strict],
        ["json_schema", "memory_update", true]
      )
      const [facts1, text1] = first === undefined ? [] : Fake.userTexts(first)
      assert.strictEqual(facts1, "=== EXISTING_FACTS ===\nNONE\n=== END_EXISTING_FACTS ===")
      assert.isTrue(text1?.startsWith("=== EXISTING_SUMMARY ===\nNONE\n"))
      // The second call gets the known facts back, to keep, update or remove.
      const [facts2, text2] = second === undefined ? [] : Fake.userTexts(second)
      assert.include(facts2, `["order_id","ORD-0001","ENTITY",0.9]`)
      assert.isTrue(text2?.startsWith("=== EXISTING_SUMMARY ===\nOrders ship to Lyon.\n"))

      const state = yield* repository.getSummaryState(c)
      assert.deepStrictEqual(state.facts.map((f) => [f.key, f.value, f.category, f.confidence]), [
        ["order_id", "ORD-0001", "ENTITY", 0.9],
        ["city", "Paris", "CONDITION", 1]
      ])
      // Provenance: the fact's value appears verbatim in the first user message (seq 1).
      assert.deepStrictEqual(state.facts[0]?.sourceSeqs, [1])
      const [record] = yield* repository.listSummarizations(c)
      assert.deepStrictEqual([record?.skillId, record?.model], ["openai/extract-facts@7", Fake.model])
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual(context.facts, state.facts)
      assert.strictEqual(context.summary, "Orders now ship to Paris.")
    }).pipe(Effect.provide(openAiMemory(
      HierarchicalStrategy.layer(options),
      (request, n) =>
        n === 1
          ? Fake.object({
            facts: [
              { key: "order_id", value: "ORD-0001", category: "ENTITY", confidence: 0.9 },
              { key: "city", value: "Lyon", category: "CONDITION", confidence: null },
              { key: "greeting", value: "said hello", category: "GENERAL", confidence: 2 }
            ],
            remove: [],
            narrative: "Orders ship to Lyon."
          })(request, n)
          : Fake.object({
            facts: [{ key: "city", value: "Paris", category: "CONDITION", confidence: 1 }],
            remove: ["greeting"],
            narrative: "Orders now ship to Paris."
          })(request, n)
    ))))

  it.effect("a 429 is retried, then the summary is applied", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const fake = yield* Fake.FakeOpenAi
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      assert.strictEqual((yield* fake.requests).length, 2)
      assert.strictEqual((yield* repository.getSummaryState(c)).narrative, "after the rate limit")
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer({ ...options, retries: 2 }),
      (request, n) =>
        n === 1
          ? Fake.error(429, "Rate limit reached", "rate_limit_exceeded")
          : Fake.text("after the rate limit")(request, n)
    ))))

  it.scoped("500 on every attempt: a typed SkillExecutionError after the bounded retries; nothing lost", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      const failed = yield* waitFor(events, "SummarizationFailed")
      assert.strictEqual(failed._tag === "SummarizationFailed" ? failed.error : "", "SkillExecutionError")
      assert.include(failedDetail(failed), "openai/summarize@5 failed (Unavailable, retryable)")
      assert.include(failedDetail(failed), "HTTP 500 (StatusCode, server_error) from POST /v1/responses")
      assert.strictEqual((yield* fake.requests).length, 3)
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer({ ...options, retries: 2 }),
      () => Fake.error(500, "The server had an error")
    ))))

  it.scoped("malformed JSON in the structured output fails without a retry; nothing lost", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      const failed = yield* waitFor(events, "SummarizationFailed")
      assert.include(failedDetail(failed), "openai/extract-facts@7 failed (MalformedOutput)")
      assert.strictEqual((yield* fake.requests).length, 1)
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(
      HierarchicalStrategy.layer({ ...options, retries: 2 }),
      Fake.text("{\"facts\": [{\"key\": \"order_id\", ")
    ))))

  it.scoped("structured output that breaks the schema is MalformedOutput too", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      assert.include(failedDetail(yield* waitFor(events, "SummarizationFailed")), "(MalformedOutput)")
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(
      HierarchicalStrategy.layer(options),
      Fake.object({
        facts: [{ key: "k", value: "v", category: "OPINION", confidence: null }],
        remove: [],
        narrative: ""
      })
    ))))

  it.scoped("a response that never comes times out (TestClock), is retried, then fails; nothing lost", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      const idle = yield* Effect.fork(memory.awaitIdle("c"))
      yield* fake.awaitRequests(1)
      yield* TestClock.adjust("5 seconds")
      yield* fake.awaitRequests(2)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(idle)
      const failed = yield* waitFor(events, "SummarizationFailed")
      assert.include(failedDetail(failed), "(Timeout, retryable): no answer within 5s")
      assert.strictEqual((yield* fake.requests).length, 2)
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(
      SummarizationStrategy.layer({ ...options, retries: 1, skillTimeout: 5000 }),
      () => ({ _tag: "Never" })
    ))))

  it.scoped("an empty summary is a failure, not a summary", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      assert.include(failedDetail(yield* waitFor(events, "SummarizationFailed")), "(EmptyOutput, retryable)")
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(SummarizationStrategy.layer(options), Fake.text("  \n")))))

  it.scoped("empty facts and a blank narrative are a failure, not a summary", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* addTurns(1, 8)
      yield* memory.awaitIdle("c")
      assert.include(failedDetail(yield* waitFor(events, "SummarizationFailed")), "(EmptyOutput, retryable)")
      yield* assertUnchanged(16)
    }).pipe(Effect.provide(openAiMemory(
      HierarchicalStrategy.layer(options),
      Fake.object({ facts: [], remove: [], narrative: " " })
    ))))
})
