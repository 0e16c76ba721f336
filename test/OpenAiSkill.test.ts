import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Context, Effect, Inspectable, Layer, Logger, LogLevel, Queue, Redacted } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as OpenAiSkill from "../src/layers/skills/OpenAiSkill.js"
import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const c = ConversationId.make("c")
const summarizeInput = { conversationId: c, text: "=== NEW_TURNS ===\nUser: hi\n=== END_NEW_TURNS ===", maxTokens: 50 }

/** Builds `OpenAiSkill.layerConfig` on `ChatMemoryConfig.openAi` under an environment given as a map, and returns its skill. */
const skillFromEnv = (env: Record<string, string>) =>
  Layer.build(OpenAiSkill.layerConfig(ChatMemoryConfig.openAi)).pipe(
    Effect.map((context) => Context.get(context, SkillService)),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

/** Everything a failure can show of itself. */
const renderings = (error: unknown): ReadonlyArray<string> => [
  String(error),
  error instanceof Error ? error.message : "",
  JSON.stringify(error),
  Inspectable.format(error),
  Cause.pretty(Cause.fail(error))
]

/** A server that knows the key and says it back in its error bodies, as some do. */
const echoingKey = (status: number): Fake.Script => () =>
  Fake.error(status, `Incorrect API key provided: ${Fake.apiKey}. You can find your API key at …`, "invalid_api_key")

describe("OpenAiSkill", () => {
  it.scoped("layerConfig reads OPENAI_BASE_URL, OPENAI_API_KEY and MEMORY_SUMMARIZER_MODEL (gpt-4o-mini by default)", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const configured = yield* skillFromEnv({
        OPENAI_API_KEY: Fake.apiKey,
        OPENAI_BASE_URL: fake.apiUrl,
        MEMORY_SUMMARIZER_MODEL: "my-small-model"
      })
      const output = yield* configured.summarize(summarizeInput)
      assert.deepStrictEqual([output.value, output.model, output.skillId], [
        "ok",
        "my-small-model",
        "openai/summarize@3"
      ])
      assert.deepStrictEqual(output.usage, { inputTokens: 10, outputTokens: 5 })
      const defaulted = yield* skillFromEnv({ OPENAI_BASE_URL: fake.apiUrl })
      assert.strictEqual((yield* defaulted.summarize(summarizeInput)).model, OpenAiSkill.defaultModel)
      const [first, second] = yield* fake.requests
      assert.deepStrictEqual([first?.body.model, second?.body.model], ["my-small-model", "gpt-4o-mini"])
      assert.strictEqual(first?.headers.authorization, `Bearer ${Fake.apiKey}`)
      // A local server may need no key: none is sent.
      assert.isUndefined(second?.headers.authorization)
    }).pipe(Effect.provide(Fake.layer(Fake.text("ok")))))

  it.scoped("layerConfig fails at construction with a ConfigError naming the variable, never showing the key", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(skillFromEnv({}))
      assert.include(String(missing), "OPENAI_API_KEY")
      const blank = yield* Effect.flip(skillFromEnv({ OPENAI_API_KEY: "  " }))
      assert.include(String(blank), "OPENAI_API_KEY")
      const url = yield* Effect.flip(skillFromEnv({ OPENAI_API_KEY: Fake.apiKey, OPENAI_BASE_URL: "localhost:11434" }))
      assert.include(String(url), "OPENAI_BASE_URL")
      const model = yield* Effect.flip(skillFromEnv({ OPENAI_API_KEY: Fake.apiKey, MEMORY_SUMMARIZER_MODEL: " " }))
      assert.include(String(model), "MEMORY_SUMMARIZER_MODEL")
      for (const error of [missing, blank, url, model]) {
        for (const text of renderings(error)) assert.notInclude(text, Fake.apiKey)
      }
    }))

  it.scoped("errors of the skill never carry the API key, even when the server echoes it", () =>
    Effect.gen(function*() {
      const skill = yield* SkillService
      const fake = yield* Fake.FakeOpenAi
      const error = yield* Effect.flip(skill.summarize(summarizeInput))
      assert.strictEqual(error._tag, "SkillExecutionError")
      assert.deepStrictEqual([error.reason, error.retryable], ["Unknown", false])
      assert.include(error.message, "HTTP 401 (StatusCode, invalid_api_key) from POST /v1/responses")
      const facts = yield* Effect.flip(skill.extractFacts({ ...summarizeInput, existingFacts: [] }))
      for (const text of [...renderings(error), ...renderings(facts)]) assert.notInclude(text, Fake.apiKey)
      // Not vacuous: the key was sent, and the server did say it back.
      const [request] = yield* fake.requests
      assert.strictEqual(request?.headers.authorization, `Bearer ${Fake.apiKey}`)
    }).pipe(Effect.provide(Fake.skillLayer(echoingKey(401)))))

  it.scoped("the API key never appears in logs, errors or events of the memory", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.map(Logger.structuredLogger, (entry) => {
          lines.push(JSON.stringify(entry))
        })
      )
      const program = Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const events = yield* memory.subscribe
        for (let i = 1; i <= 8; i++) {
          yield* memory.addMessages("c", [
            { role: "user", content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
            { role: "assistant", content: `Answer ${i}.`.padEnd(100, ".") }
          ])
        }
        yield* memory.awaitIdle()
        const errors = yield* Effect.flip(Effect.flatMap(SkillService, (skill) => skill.summarize(summarizeInput)))
        yield* memory.getContext("c")
        yield* memory.awaitIdle()
        return { events: [...yield* Queue.takeAll(events)], errors }
      })
      // Eight turns of 42 tokens pass the threshold and do not fit the room (200 - 60): a fold is due.
      const knobs = { promptTokenBudget: 200, summaryTokenCap: 60, chunkSummarizeThreshold: 300 }
      const runs = [
        {
          strategy: SummarizationStrategy.layer({ ...knobs, retries: 1, retryBaseDelayMillis: 0 })
        },
        { strategy: HierarchicalStrategy.layer({ ...knobs, retries: 1, retryBaseDelayMillis: 0 }) }
      ]
      for (const { strategy } of runs) {
        for (const status of [401, 500]) {
          const { errors, events } = yield* program.pipe(
            Effect.provide(
              ChatMemory.layer.pipe(
                Layer.provideMerge(strategy),
                Layer.provideMerge(Fake.skillLayer(echoingKey(status))),
                Layer.provideMerge(MemoryRepository.layer),
                Layer.provideMerge(ApproximateTokenCounter.layer)
              )
            ),
            Effect.provide(capture),
            Logger.withMinimumLogLevel(LogLevel.All)
          )
          const tags = events.map((event) => event._tag)
          assert.include(tags, "SummarizationFailed")
          for (const event of events) assert.notInclude(JSON.stringify(event), Fake.apiKey)
          for (const text of renderings(errors)) assert.notInclude(text, Fake.apiKey)
        }
      }
      // Not vacuous: the failures were logged, with their details.
      assert.isTrue(lines.some((line) => line.includes("summarization failed") && line.includes("HTTP 500")))
      assert.isTrue(lines.some((line) => line.includes("HTTP 401")))
      for (const line of lines) assert.notInclude(line, Fake.apiKey)
    }))

  it.scoped("layer takes typed options: the key stays Redacted until the HTTP call", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const key = Redacted.make("sk-programmatic")
      assert.notInclude(String(key), "sk-programmatic")
      const context = yield* Layer.build(OpenAiSkill.layer({ apiKey: key, apiUrl: fake.apiUrl, model: "tiny" }))
      const output = yield* Context.get(context, SkillService).summarize(summarizeInput)
      assert.strictEqual(output.model, "tiny")
      const [request] = yield* fake.requests
      assert.strictEqual(request?.headers.authorization, "Bearer sk-programmatic")
    }).pipe(Effect.provide(Fake.layer(Fake.text("ok")))))
})
