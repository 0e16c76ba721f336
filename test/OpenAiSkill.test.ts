import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  ConfigProvider,
  Context,
  Effect,
  Inspectable,
  Layer,
  Logger,
  LogLevel,
  Queue,
  Redacted,
  Schema
} from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as OpenAiModels from "../src/layers/internal/openAiModels.js"
import * as OpenAiSkill from "../src/layers/skills/OpenAiSkill.js"
import * as Prompts from "../src/layers/skills/Prompts.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { oneTurnInput } from "./fixtures/messages.js"

const c = ConversationId.make("c")
const summarizeInput = oneTurnInput("hi", 5)

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

/** The Responses API fields a hosted prompt is about, as the server received them. */
const HostedBody = Schema.parseJson(Schema.Struct({
  prompt: Schema.optional(Schema.Unknown),
  instructions: Schema.optional(Schema.Unknown),
  input: Schema.Unknown
}))

const hostedFields = (request: Fake.RecordedRequest | undefined) =>
  Schema.decodeUnknownSync(HostedBody)(request?.rawBody ?? "{}")

/** The input of a request that holds nothing but `text`, as the client sends it. */
const inputOnly = (text: string) => [{ role: "user", content: [{ type: "input_text", text }] }]

/** The roles of a request's input messages. */
const roles = (request: Fake.RecordedRequest | undefined) => (request?.body.input ?? []).map((m) => m.role)

/** The environment of a hosted summary prompt against the fake server. */
const hostedEnv = (apiUrl: string, prompt: Record<string, string>) => ({
  OPENAI_API_KEY: Fake.apiKey,
  OPENAI_BASE_URL: apiUrl,
  ...prompt
})

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
        "openai/summarize@5"
      ])
      assert.deepStrictEqual(output.usage, { inputTokens: 10, outputTokens: 5 })
      const defaulted = yield* skillFromEnv({ OPENAI_BASE_URL: fake.apiUrl })
      assert.strictEqual((yield* defaulted.summarize(summarizeInput)).model, OpenAiModels.summarizer)
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
      const knobs = { tokenBudget: 200, summaryTokenCap: 60, chunkSummarizeThreshold: 300 }
      const runs = [
        {
          strategy: SummarizationStrategy.layer({ ...knobs, retries: 1, retryBaseDelay: 0 })
        },
        { strategy: HierarchicalStrategy.layer({ ...knobs, retries: 1, retryBaseDelay: 0 }) }
      ]
      for (const { strategy } of runs) {
        for (const status of [401, 500]) {
          const { errors, events } = yield* program.pipe(
            Effect.provide(
              ChatMemory.layer.pipe(
                Layer.provideMerge(strategy),
                Layer.provideMerge(Fake.skillLayer(echoingKey(status))),
                Layer.provideMerge(MemoryStore.layer),
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

  it.scoped("a hosted summary prompt (PROMPT_ID_SUMMARY_GLOBAL, PROMPT_VERSION_SUMMARY_GLOBAL): the request carries prompt { id, version } and the input text alone", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const skill = yield* skillFromEnv(hostedEnv(fake.apiUrl, {
        PROMPT_ID_SUMMARY_GLOBAL: "pmpt_summary_1",
        PROMPT_VERSION_SUMMARY_GLOBAL: "3"
      }))
      const output = yield* skill.summarize(summarizeInput)
      // The skill id names the hosted prompt, not a prompt version of ours.
      assert.deepStrictEqual([output.value, output.skillId], ["ok", "openai/summarize@prompt:pmpt_summary_1:3"])
      const facts = yield* skill.extractFacts({ ...summarizeInput, existingFacts: [] })
      assert.strictEqual(facts.skillId, "openai/extract-facts@7")
      const [summarize, extract] = yield* fake.requests
      const hosted = hostedFields(summarize)
      assert.deepStrictEqual(hosted.prompt, { id: "pmpt_summary_1", version: "3" })
      // Exactly the input text: no system or developer message, no instructions of ours.
      assert.deepStrictEqual(hosted.input, inputOnly(Prompts.summaryInput(summarizeInput)))
      assert.isUndefined(hosted.instructions)
      assert.strictEqual(summarize?.body.model, "gpt-4o-mini")
      // Extract-facts keeps our prompt, and does not run the summary prompt.
      const extracted = hostedFields(extract)
      assert.isUndefined(extracted.prompt)
      assert.deepStrictEqual(roles(extract), ["system", "user"])
      assert.include(extract === undefined ? "" : Fake.systemText(extract) ?? "", "memory of a long conversation")
    }).pipe(Effect.provide(Fake.layer((request, n) =>
      Fake.isStructured(request)
        ? Fake.object({ facts: [], remove: [], narrative: "n" })(request, n)
        : Fake.text("ok")(request, n)
    ))))

  it.scoped("a hosted prompt without a version runs the published one: the request names the id alone", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const skill = yield* skillFromEnv(hostedEnv(fake.apiUrl, { PROMPT_ID_SUMMARY_GLOBAL: "pmpt_summary_1" }))
      const output = yield* skill.summarize(summarizeInput)
      assert.strictEqual(output.skillId, "openai/summarize@prompt:pmpt_summary_1")
      const [request] = yield* fake.requests
      assert.deepStrictEqual(hostedFields(request).prompt, { id: "pmpt_summary_1" })
      assert.deepStrictEqual(hostedFields(request).input, inputOnly(Prompts.summaryInput(summarizeInput)))
    }).pipe(Effect.provide(Fake.layer(Fake.text("ok")))))

  it.scoped("without a hosted prompt, summarize sends our system prompt and no prompt field", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const skill = yield* skillFromEnv(hostedEnv(fake.apiUrl, {}))
      yield* skill.summarize(summarizeInput)
      const [request] = yield* fake.requests
      assert.isUndefined(hostedFields(request).prompt)
      assert.deepStrictEqual(roles(request), ["system", "user"])
      assert.include(request === undefined ? "" : Fake.systemText(request) ?? "", "the user's goals")
    }).pipe(Effect.provide(Fake.layer(Fake.text("ok")))))

  it.scoped("hosted prompt variables that cannot be right fail at construction, naming the variable", () =>
    Effect.gen(function*() {
      const url = "http://127.0.0.1:9/v1"
      const cases: ReadonlyArray<readonly [Record<string, string>, ReadonlyArray<string>]> = [
        [{ PROMPT_VERSION_SUMMARY_GLOBAL: "3" }, ["PROMPT_ID_SUMMARY_GLOBAL", "PROMPT_VERSION_SUMMARY_GLOBAL"]],
        [{ PROMPT_ID_SUMMARY_GLOBAL: "  " }, ["PROMPT_ID_SUMMARY_GLOBAL", "blank"]],
        [{ PROMPT_ID_SUMMARY_GLOBAL: "pmpt 1" }, ["PROMPT_ID_SUMMARY_GLOBAL", "no spaces"]],
        [{ PROMPT_ID_SUMMARY_GLOBAL: "pmpt_1", PROMPT_VERSION_SUMMARY_GLOBAL: "" }, ["PROMPT_VERSION_SUMMARY_GLOBAL"]]
      ]
      for (const [prompt, mentions] of cases) {
        const error = yield* Effect.flip(skillFromEnv(hostedEnv(url, prompt)))
        for (const mention of mentions) assert.include(String(error), mention)
      }
      // Through the whole configuration: a hosted prompt needs the OpenAI summarizer, and the
      // hierarchical strategy has no layered mode.
      const read = (env: Record<string, string>) =>
        Effect.flip(
          Effect.withConfigProvider(ChatMemoryConfig.config, ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      const offline = yield* read({ PROMPT_ID_SUMMARY_GLOBAL: "pmpt_1" })
      assert.include(String(offline), "PROMPT_ID_SUMMARY_GLOBAL")
      assert.include(String(offline), "OPENAI_API_KEY")
      const layered = yield* read({ MEMORY_STRATEGY: "hierarchical", MEMORY_SUMMARY_MODE: "layered" })
      assert.include(String(layered), "MEMORY_SUMMARY_MODE")
      const options = yield* Effect.withConfigProvider(
        ChatMemoryConfig.config,
        ConfigProvider.fromMap(new Map(Object.entries(hostedEnv(url, { PROMPT_ID_SUMMARY_GLOBAL: "pmpt_1" }))))
      )
      assert.deepStrictEqual(
        options.summarizer?._tag === "openai" ? options.summarizer.summaryPrompt : undefined,
        { id: "pmpt_1" }
      )
    }))

  it.effect("typed options: a hosted prompt summarizes a conversation; over the cap, the retry adds the answer and the overrun, still with no system message", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const memory = yield* ChatMemoryService
      for (let i = 1; i <= 8; i++) {
        yield* memory.addMessages("c", [
          { role: "user", content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
          { role: "assistant", content: `Answer ${i}.`.padEnd(100, ".") }
        ])
      }
      yield* memory.awaitIdle("c")
      const [first, second, ...rest] = yield* fake.requests
      assert.strictEqual(rest.length, 0)
      const text = first === undefined ? [] : Fake.userTexts(first)
      assert.isTrue(text[0]?.startsWith("=== EXISTING_SUMMARY ===\nNONE\n"))
      assert.deepStrictEqual(hostedFields(first).input, inputOnly(text[0] ?? ""))
      assert.deepStrictEqual(hostedFields(first).prompt, { id: "pmpt_summary_1", version: "7" })
      assert.deepStrictEqual(hostedFields(second).prompt, { id: "pmpt_summary_1", version: "7" })
      assert.deepStrictEqual(roles(second), ["user", "assistant", "user"])
      const [record] = yield* (yield* SummaryStore).listSummarizations(c)
      assert.deepStrictEqual([record?.skillId, record?.summary], [
        "openai/summarize@prompt:pmpt_summary_1:7",
        "Orders shipped."
      ])
    }).pipe(Effect.provide(
      ChatMemory.layer.pipe(
        Layer.provideMerge(
          SummarizationStrategy.layer({ tokenBudget: 200, summaryTokenCap: 60, chunkSummarizeThreshold: 300 })
        ),
        Layer.provideMerge(Layer.unwrapEffect(Effect.map(Fake.FakeOpenAi, (fake) =>
          OpenAiSkill.layer({
            apiKey: Redacted.make(Fake.apiKey),
            apiUrl: fake.apiUrl,
            model: Fake.model,
            summaryPrompt: { id: "pmpt_summary_1", version: "7" }
          })))),
        Layer.provideMerge(MemoryStore.layer),
        Layer.provideMerge(ApproximateTokenCounter.layer),
        Layer.provideMerge(
          Fake.layer((request, n) => Fake.text(n === 1 ? "Order shipped. ".repeat(60) : "Orders shipped.")(request, n))
        )
      )
    )))

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
