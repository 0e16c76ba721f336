/**
 * The composed memory: `ChatMemoryLive.layerConfig` under environments given as maps (every
 * strategy, every store, invalid values, the summarizer chosen by the provider variables),
 * `ChatMemoryLive.layer` from typed options, and the test composition `ChatMemoryTest`.
 */
import { LanguageModel } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { ConfigError, ConfigProvider, Context, Effect, Layer, Redacted, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { oneTurnInput } from "./fixtures/messages.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

type Env = Record<string, string>

const provider = (env: Env) => ConfigProvider.fromMap(new Map(Object.entries(env)))

/** Builds `layerConfig` under `env`; the services live as long as the test's scope. */
const build = (env: Env) => Layer.build(ChatMemoryLive.layerConfig()).pipe(Effect.withConfigProvider(provider(env)))

/** The configuration error `layerConfig` fails with under `env`. */
const configError = (env: Env) =>
  Effect.scoped(Effect.flip(build(env))).pipe(
    Effect.filterOrDieMessage(ConfigError.isConfigError, "expected a ConfigError")
  )

/** Small knobs, so that a dozen turns cross the summarization threshold. */
const small: Env = {
  MEMORY_STORE: "memory",
  MEMORY_K_RAW_TURNS: "2",
  MEMORY_PROMPT_TOKEN_BUDGET: "200",
  MEMORY_CHUNK_SUMMARIZE_THRESHOLD: "300",
  MEMORY_SUMMARY_TOKEN_CAP: "60"
}

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}: where is it now?` },
  { role: "assistant" as const, content: `Order ORD-${1000 + i} shipped on May ${i} to Lyon; it costs $${i}0.00.` }
]

/** Adds `turns` turns to `id`, waiting for the background work after each, as an agent would. */
const feed = (memory: ChatMemoryService["Type"], id: string, turns: number) =>
  Effect.forEach(
    Array.from({ length: turns }, (_, i) => turn(i + 1)),
    (messages) => Effect.zipRight(memory.addMessages(id, messages), memory.awaitIdle(id)),
    { discard: true }
  )

const summarizeInput = oneTurnInput("Order ORD-1 costs $5.00, due May 3.", 13)

describe("ChatMemoryConfig.config", () => {
  it.effect("an empty environment gives the defaults", () =>
    Effect.gen(function*() {
      const options = yield* Effect.withConfigProvider(ChatMemoryConfig.config, provider({}))
      assert.deepStrictEqual(options, {
        strategy: "summarization",
        // No dependency, nothing to open: the library's default store is in memory.
        store: { _tag: "memory" },
        summarizer: { _tag: "extractive" },
        tokenizer: "approximate",
        kRawTurns: 3,
        tokenBudget: 3000,
        // No explicit threshold (none in the options): the watermarks decide.
        highWater: 0.9,
        lowWater: 0.25,
        view: "full",
        recall: "lexical",
        recallTokenBudget: 0.25,
        userFactsTokenBudget: 0.2,
        digestTokenBudget: 0.05,
        maxMessageLength: 4 * 1024 * 1024,
        summarizationConcurrency: 16,
        summaryTokenCap: 500,
        mode: "incremental",
        narrativeFold: "append"
      })
    }))

  it.effect("a data directory alone means PGlite there; MEMORY_STORE=pglite alone, PGlite in memory", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.map(Effect.withConfigProvider(ChatMemoryConfig.config, provider(env)), (options) => options.store)
      assert.deepStrictEqual(yield* read({ MEMORY_DATA_DIR: "/var/lib/memory" }), {
        _tag: "pglite",
        dataDir: "/var/lib/memory"
      })
      assert.deepStrictEqual(yield* read({ MEMORY_STORE: "pglite" }), { _tag: "pglite", dataDir: undefined })
      assert.deepStrictEqual(yield* read({ MEMORY_STORE: "memory", MEMORY_DATA_DIR: "/var/lib/memory" }), {
        _tag: "memory"
      })
    }))

  it.effect("every variable reaches its option", () =>
    Effect.gen(function*() {
      const options = yield* Effect.withConfigProvider(
        ChatMemoryConfig.config,
        provider({
          MEMORY_STRATEGY: "hierarchical",
          MEMORY_STORE: "pglite",
          MEMORY_DATA_DIR: "/var/lib/memory",
          MEMORY_K_RAW_TURNS: "5",
          MEMORY_PROMPT_TOKEN_BUDGET: "4000",
          MEMORY_CHUNK_SUMMARIZE_THRESHOLD: "2500",
          MEMORY_SUMMARY_TOKEN_CAP: "700",
          MEMORY_SUMMARY_MODE: "full",
          MEMORY_HIGH_WATER: "0.8",
          MEMORY_LOW_WATER: "0.3",
          MEMORY_CONTEXT_VIEW: "stable",
          MEMORY_RECALL: "off",
          MEMORY_RECALL_TOKEN_BUDGET: "0.4",
          MEMORY_TOKENIZER: "exact",
          OPENAI_API_KEY: Fake.apiKey,
          MEMORY_SUMMARIZER_MODEL: "small-model"
        })
      )
      assert.strictEqual(options.strategy, "hierarchical")
      assert.deepStrictEqual(options.store, { _tag: "pglite", dataDir: "/var/lib/memory" })
      assert.deepStrictEqual(
        [options.kRawTurns, options.tokenBudget, options.chunkSummarizeThreshold, options.summaryTokenCap],
        [5, 4000, 2500, 700]
      )
      assert.deepStrictEqual([options.mode, options.tokenizer], ["full", "exact"])
      assert.deepStrictEqual([options.highWater, options.lowWater, options.view], [0.8, 0.3, "stable"])
      assert.deepStrictEqual([options.recall, options.recallTokenBudget], ["off", 0.4])
      assert.strictEqual(options.summarizer?._tag, "openai")
      if (options.summarizer?._tag === "openai") {
        assert.strictEqual(options.summarizer.model, "small-model")
        assert.strictEqual(Redacted.value(options.summarizer.apiKey ?? Redacted.make("")), Fake.apiKey)
      }
    }))

  it.effect("a cap at or above the budget is refused only for the summarizing strategies", () =>
    Effect.gen(function*() {
      const env = { MEMORY_PROMPT_TOKEN_BUDGET: "500", MEMORY_SUMMARY_TOKEN_CAP: "500" }
      const sliding = yield* Effect.withConfigProvider(
        ChatMemoryConfig.config,
        provider({ ...env, MEMORY_STRATEGY: "sliding-window" })
      )
      assert.strictEqual(sliding.tokenBudget, 500)
      const error = yield* Effect.flip(Effect.withConfigProvider(ChatMemoryConfig.config, provider(env)))
      assert.include(String(error), "MEMORY_SUMMARY_TOKEN_CAP")
      assert.include(String(error), "MEMORY_PROMPT_TOKEN_BUDGET")
    }))
})

describe("ChatMemoryLive.layerConfig: strategies", () => {
  it.scoped("noop: the whole conversation, no budget, nothing summarized", () =>
    Effect.gen(function*() {
      const memory = Context.get(yield* build({ ...small, MEMORY_STRATEGY: "noop" }), ChatMemoryService)
      yield* feed(memory, "c", 12)
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual([context.strategy, context.tokenBudget, context.recent.length], ["noop", null, 24])
      assert.strictEqual((yield* memory.stats("c")).summarizations, 0)
    }))

  it.scoped("sliding-window: the newest turns inside MEMORY_PROMPT_TOKEN_BUDGET, the rest omitted", () =>
    Effect.gen(function*() {
      const memory = Context.get(yield* build({ ...small, MEMORY_STRATEGY: "sliding-window" }), ChatMemoryService)
      yield* feed(memory, "c", 12)
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual([context.strategy, context.tokenBudget], ["sliding-window", 200])
      assert.isAtMost(context.tokenCount, 200)
      assert.isAbove(context.turnsOmitted, 0)
      assert.strictEqual(context.turnsShown + context.turnsOmitted, 12)
      assert.strictEqual((yield* memory.stats("c")).summarizations, 0)
    }))

  it.scoped("summarization: a running summary by the extractive skill, the last K turns verbatim", () =>
    Effect.gen(function*() {
      const services = yield* build({ ...small, MEMORY_STRATEGY: "summarization" })
      const memory = Context.get(services, ChatMemoryService)
      yield* feed(memory, "c", 12)
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual([context.strategy, context.tokenBudget], ["summarization", 200])
      assert.isAtMost(context.tokenCount, 200)
      assert.isNotNull(context.summary)
      assert.deepStrictEqual(
        context.recent.slice(-4).map((m) => m.content),
        [...turn(11), ...turn(12)].map((m) => m.content)
      )
      const records = yield* Context.get(services, SummaryStore).listSummarizations(ConversationId.make("c"))
      assert.isAbove(records.length, 0)
      assert.isTrue(records.every((r) => r.skillId === "extractive/summarize@5" && r.mode === "incremental"))
    }))

  it.scoped("hierarchical: facts and a narrative by the extractive skill", () =>
    Effect.gen(function*() {
      const services = yield* build({ ...small, MEMORY_STRATEGY: "hierarchical" })
      const memory = Context.get(services, ChatMemoryService)
      yield* feed(memory, "c", 12)
      const context = yield* memory.getContext("c")
      assert.strictEqual(context.strategy, "hierarchical")
      assert.isAtMost(context.tokenCount, 200)
      assert.isAbove(context.facts.length, 0)
      const records = yield* Context.get(services, SummaryStore).listSummarizations(ConversationId.make("c"))
      assert.isTrue(records.length > 0 && records.every((r) => r.skillId === "extractive/extract-facts@6"))
    }))

  it.scoped("MEMORY_SUMMARY_MODE reaches the summarization strategy", () =>
    Effect.gen(function*() {
      const services = yield* build({ ...small, MEMORY_SUMMARY_MODE: "full" })
      yield* feed(Context.get(services, ChatMemoryService), "c", 12)
      const records = yield* Context.get(services, SummaryStore).listSummarizations(ConversationId.make("c"))
      assert.isTrue(records.length > 0 && records.every((r) => r.mode === "full"))
    }))

  it.scoped("MEMORY_NARRATIVE_FOLD reaches the hierarchical strategy: a rewrite reads the whole narrative again", () =>
    Effect.gen(function*() {
      const read = (fold: string) =>
        Effect.gen(function*() {
          const services = yield* build({ ...small, MEMORY_STRATEGY: "hierarchical", MEMORY_NARRATIVE_FOLD: fold })
          yield* feed(Context.get(services, ChatMemoryService), "c", 40)
          const records = yield* Context.get(services, SummaryStore).listSummarizations(ConversationId.make("c"))
          return { folds: records.length, read: records.reduce((n, r) => n + r.inputTokens, 0) }
        })
      const append = yield* read("append")
      const rewrite = yield* read("rewrite")
      assert.isAtLeast(append.folds, 5)
      assert.strictEqual(rewrite.folds, append.folds)
      assert.isAbove(rewrite.read, append.read)
      const error = yield* configError({ ...small, MEMORY_NARRATIVE_FOLD: "sideways" })
      assert.include(String(error), "MEMORY_NARRATIVE_FOLD")
    }))

  it.scoped("MEMORY_TOKENIZER chooses the token counter", () =>
    Effect.gen(function*() {
      const approximate = Context.get(yield* build({ MEMORY_STORE: "memory" }), TokenCounter)
      const exact = Context.get(yield* build({ MEMORY_STORE: "memory", MEMORY_TOKENIZER: "exact" }), TokenCounter)
      assert.deepStrictEqual([approximate.name, exact.name], ["approximate", "o200k_base"])
    }))
})

/** Writes one turn through a fresh build of `env`, then reads it back through another build. */
const survivesRestart = (env: Env) =>
  Effect.gen(function*() {
    const id = `restart-${randomUUID()}`
    yield* Effect.scoped(
      Effect.flatMap(build(env), (services) => Context.get(services, ChatMemoryService).addMessages(id, turn(1)))
    )
    return yield* Effect.scoped(
      Effect.flatMap(build(env), (services) =>
        Effect.either(Context.get(services, ChatMemoryService).getMessages(id)).pipe(
          Effect.map((read) => (read._tag === "Right"
            ? read.right.map((m) =>
              m.content
            )
            : read.left._tag)
          )
        ))
    )
  })

/** A temporary directory, removed with the scope. */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "chat-memory-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("ChatMemoryLive.layerConfig: stores", () => {
  it.effect("memory: a fresh, empty store per build", () =>
    Effect.map(
      survivesRestart({ MEMORY_STORE: "memory" }),
      (read) => assert.strictEqual(read, "ConversationNotFoundError")
    ))

  it.effect(
    "pglite without MEMORY_DATA_DIR (the default store): in memory, empty per build",
    () => Effect.map(survivesRestart({}), (read) => assert.strictEqual(read, "ConversationNotFoundError"))
  )

  it.scoped("pglite with MEMORY_DATA_DIR: the conversation survives the layer", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const read = yield* survivesRestart({ MEMORY_STORE: "pglite", MEMORY_DATA_DIR: join(dir, "db") })
      assert.deepStrictEqual(read, turn(1).map((m) => m.content))
    }))
})

describePostgres("ChatMemoryLive.layerConfig: PostgreSQL store", (base) => {
  /** `DATABASE_URL` for a schema of its own, dropped with the scope. */
  const schemaUrl = freshSchemaUrl(base)

  it.scoped(
    "postgres at DATABASE_URL: migrations run at start, the conversation survives the layer",
    () =>
      Effect.gen(function*() {
        const url = yield* schemaUrl
        const read = yield* survivesRestart({ MEMORY_STORE: "postgres", DATABASE_URL: url })
        assert.deepStrictEqual(read, turn(1).map((m) => m.content))
      })
  )
})

describe("ChatMemoryLive.layerConfig: invalid values fail with a ConfigError naming the variable", () => {
  const cases: ReadonlyArray<readonly [Env, ReadonlyArray<string>]> = [
    [{ MEMORY_STRATEGY: "lru" }, ["MEMORY_STRATEGY", "noop", "sliding-window", "summarization", "hierarchical", "lru"]],
    [{ MEMORY_STORE: "sqlite" }, ["MEMORY_STORE", "memory", "pglite", "postgres", "sqlite"]],
    [{ MEMORY_TOKENIZER: "bpe" }, ["MEMORY_TOKENIZER", "approximate", "exact"]],
    [{ MEMORY_SUMMARY_MODE: "rolling" }, ["MEMORY_SUMMARY_MODE", "incremental", "full", "layered"]],
    [{ MEMORY_K_RAW_TURNS: "three" }, ["MEMORY_K_RAW_TURNS", "integer"]],
    [{ MEMORY_K_RAW_TURNS: "0" }, ["MEMORY_K_RAW_TURNS", "from 1 to 1000"]],
    [{ MEMORY_PROMPT_TOKEN_BUDGET: "-1" }, ["MEMORY_PROMPT_TOKEN_BUDGET"]],
    [{ MEMORY_CHUNK_SUMMARIZE_THRESHOLD: "1.5" }, ["MEMORY_CHUNK_SUMMARIZE_THRESHOLD"]],
    [{ MEMORY_HIGH_WATER: "1.5" }, ["MEMORY_HIGH_WATER", "from 0 to 1"]],
    [{ MEMORY_LOW_WATER: "-0.1" }, ["MEMORY_LOW_WATER", "from 0 to 1"]],
    [{ MEMORY_HIGH_WATER: "0.5", MEMORY_LOW_WATER: "0.5" }, ["MEMORY_LOW_WATER", "below MEMORY_HIGH_WATER"]],
    [{ MEMORY_CONTEXT_VIEW: "cached" }, ["MEMORY_CONTEXT_VIEW", "full", "stable"]],
    [{ MEMORY_RECALL: "semantic" }, ["MEMORY_RECALL", "off", "lexical"]],
    [{ MEMORY_RECALL_TOKEN_BUDGET: "1" }, ["MEMORY_RECALL_TOKEN_BUDGET", "below 1"]],
    [{ MEMORY_RECALL_TOKEN_BUDGET: "25%" }, ["MEMORY_RECALL_TOKEN_BUDGET", "from 0 to 1"]],
    [{ MEMORY_MAX_MESSAGE_LENGTH: "0" }, ["MEMORY_MAX_MESSAGE_LENGTH", "from 1 to 4194304"]],
    // Decimal digits only: hexadecimal, binary, exponents and signs are not budgets.
    [{ MEMORY_PROMPT_TOKEN_BUDGET: "0x1000" }, ["MEMORY_PROMPT_TOKEN_BUDGET", "decimal", "0x1000"]],
    [{ MEMORY_PROMPT_TOKEN_BUDGET: "0b11111111111" }, ["MEMORY_PROMPT_TOKEN_BUDGET", "decimal"]],
    [{ MEMORY_PROMPT_TOKEN_BUDGET: "3e3" }, ["MEMORY_PROMPT_TOKEN_BUDGET", "decimal"]],
    [{ MEMORY_K_RAW_TURNS: "+3" }, ["MEMORY_K_RAW_TURNS", "decimal"]],
    [{ MEMORY_K_RAW_TURNS: " 3" }, ["MEMORY_K_RAW_TURNS", "decimal"]],
    [{ MEMORY_SUMMARY_TOKEN_CAP: "" }, ["MEMORY_SUMMARY_TOKEN_CAP"]],
    // A blank value is an error, never a silent default (a blank data directory persisted nothing).
    [{ MEMORY_STORE: "pglite", MEMORY_DATA_DIR: "   " }, ["MEMORY_DATA_DIR", "blank"]],
    [{ MEMORY_STRATEGY: "" }, ["MEMORY_STRATEGY"]],
    [{ MEMORY_STORE: "postgres", DATABASE_URL: " " }, ["DATABASE_URL"]],
    [{ MEMORY_SUMMARY_TOKEN_CAP: "3000" }, ["MEMORY_SUMMARY_TOKEN_CAP", "MEMORY_PROMPT_TOKEN_BUDGET"]],
    [{ MEMORY_STORE: "postgres" }, ["DATABASE_URL", "required"]],
    [{ MEMORY_STORE: "postgres", DATABASE_URL: "mysql://u:hunter2@db/x" }, ["DATABASE_URL", "postgres://"]],
    [{ OPENAI_BASE_URL: "localhost:11434" }, ["OPENAI_BASE_URL", "http"]],
    // A summarizer model with nothing to reach it is a mistake, never a silent offline summarizer.
    [{ MEMORY_SUMMARIZER_MODEL: "llama3.1" }, ["MEMORY_SUMMARIZER_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"]],
    [{ MEMORY_SUMMARIZER_MODEL: "llama3.1", OPENAI_API_KEY: " " }, ["MEMORY_SUMMARIZER_MODEL", "OPENAI_BASE_URL"]]
  ]
  for (const [env, mentions] of cases) {
    it.effect(`${JSON.stringify(env)}`, () =>
      Effect.gen(function*() {
        const error = yield* configError({ MEMORY_STORE: "memory", ...env })
        for (const mention of mentions) assert.include(String(error), mention)
        assert.notInclude(String(error), "hunter2")
      }))
  }
})

describe("ChatMemoryLive.layerConfig: the summarizer follows the provider variables", () => {
  const skillUnder = (env: Env) => Effect.map(build({ MEMORY_STORE: "memory", ...env }), Context.get(SkillService))

  it.scoped("no key and no base URL (or a blank key): the offline extractive skill", () =>
    Effect.gen(function*() {
      for (const env of [{}, { OPENAI_API_KEY: "  " }]) {
        const output = yield* (yield* skillUnder(env)).summarize(summarizeInput)
        assert.strictEqual(output.skillId, "extractive/summarize@5")
        assert.include(output.value, "ORD-1")
      }
    }))

  it.scoped("a key and a base URL: the OpenAI skill, calling that server with that key", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const skill = yield* skillUnder({ OPENAI_API_KEY: Fake.apiKey, OPENAI_BASE_URL: fake.apiUrl })
      const output = yield* skill.summarize(summarizeInput)
      assert.deepStrictEqual([output.skillId, output.value], ["openai/summarize@5", "summary from the server"])
      const [request] = yield* fake.requests
      assert.strictEqual(request?.headers.authorization, `Bearer ${Fake.apiKey}`)
      assert.strictEqual(request?.body.model, "gpt-4o-mini")
    }).pipe(Effect.provide(Fake.layer(Fake.text("summary from the server")))))

  it.scoped("a base URL alone (a local server): the OpenAI skill, no key sent", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const skill = yield* skillUnder({ OPENAI_BASE_URL: fake.apiUrl, MEMORY_SUMMARIZER_MODEL: "llama3.2" })
      const output = yield* skill.summarize(summarizeInput)
      assert.deepStrictEqual([output.skillId, output.model], ["openai/summarize@5", "llama3.2"])
      const [request] = yield* fake.requests
      assert.isUndefined(request?.headers.authorization)
    }).pipe(Effect.provide(Fake.layer(Fake.text("ok")))))

  it.scoped("summaries of a conversation go to the configured server", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const services = yield* build({ ...small, OPENAI_BASE_URL: fake.apiUrl })
      yield* feed(Context.get(services, ChatMemoryService), "c", 12)
      const context = yield* Context.get(services, ChatMemoryService).getContext("c")
      assert.strictEqual(context.summary, "Orders discussed so far.")
      assert.isAbove((yield* fake.requests).length, 0)
    }).pipe(Effect.provide(Fake.layer(Fake.text("Orders discussed so far.")))))
})

describe("ChatMemoryLive.layer (typed options)", () => {
  it.scoped("builds the chosen parts; what is left out takes its default", () =>
    Effect.gen(function*() {
      const services = yield* Layer.build(
        ChatMemoryLive.layer({ strategy: "sliding-window", store: { _tag: "memory" }, tokenBudget: 120 })
      )
      const memory = Context.get(services, ChatMemoryService)
      yield* feed(memory, "c", 6)
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual([context.strategy, context.tokenBudget], ["sliding-window", 120])
      assert.strictEqual(Context.get(services, TokenCounter).name, "approximate")
    }))

  /** The memory with `summarizer` after a dozen short turns (small knobs: they fold at least once). */
  const summarizedWith = (summarizer: ChatMemoryConfig.Summarizer) =>
    Effect.gen(function*() {
      const services = yield* Layer.build(ChatMemoryLive.layer({
        strategy: "summarization",
        store: { _tag: "memory" },
        tokenBudget: 300,
        summaryTokenCap: 60,
        summarizer
      }))
      const memory = Context.get(services, ChatMemoryService)
      yield* feed(memory, "c", 12)
      yield* memory.awaitIdle("c")
      const repository = Context.get(services, SummaryStore)
      const state = yield* repository.getSummaryState(ConversationId.make("c"))
      const [record] = yield* repository.listSummarizations(ConversationId.make("c"))
      return { state, record }
    })

  it.scoped("a SkillService layer of one's own writes the summaries", () =>
    Effect.gen(function*() {
      const inputs: Array<SkillService.SummarizeInput> = []
      const own = Layer.succeed(
        SkillService,
        SkillService.of({
          summarize: (input) =>
            Effect.sync(() => {
              inputs.push(input)
              return {
                value: "Our own summary.",
                skillId: "ours/summarize@1",
                model: null,
                usage: { inputTokens: 3, outputTokens: 2 }
              }
            }),
          extractFacts: () => Effect.die("not used by the summarization strategy")
        })
      )
      const { record, state } = yield* summarizedWith({ _tag: "skill", layer: own })
      assert.strictEqual(state.narrative, "Our own summary.")
      assert.deepStrictEqual([record?.skillId, record?.inputTokens], ["ours/summarize@1", 3])
      // It gets the data: no summary yet, and the turns as stored.
      assert.deepStrictEqual(inputs[0]?.existingSummary, { _tag: "None" })
      assert.strictEqual(inputs[0]?.turns[0]?.messages[0]?.role, "user")
    }))

  it.scoped("a LanguageModel layer of any provider summarizes with our prompts", () =>
    Effect.gen(function*() {
      const prompts: Array<string> = []
      // A provider the memory has no adapter for: only the LanguageModel tag, as any provider gives it.
      const anthropicLike = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({
          generateText: (options) =>
            Effect.sync(() => {
              prompts.push(JSON.stringify(options.prompt))
              return [
                { type: "text", text: "The customer ordered oak flooring." },
                {
                  type: "finish",
                  reason: "stop",
                  usage: { inputTokens: 40, outputTokens: 6, totalTokens: 46 }
                }
              ]
            }),
          streamText: () => Stream.empty
        })
      )
      const { record, state } = yield* summarizedWith({
        _tag: "language-model",
        layer: anthropicLike,
        model: "claude-test",
        skillIdPrefix: "anthropic"
      })
      assert.strictEqual(state.narrative, "The customer ordered oak flooring.")
      assert.deepStrictEqual([record?.skillId, record?.model], ["anthropic/summarize@5", "claude-test"])
      assert.include(prompts[0], "running summary")
      assert.include(prompts[0], "=== NEW_TURNS ===")
    }))

  it.effect("invalid knobs fail the construction with a DataValidationError naming the option", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.scoped(Layer.build(
        ChatMemoryLive.layer({ store: { _tag: "memory" }, kRawTurns: 0 })
      )))
      assert.strictEqual(error._tag, "DataValidationError")
      if (error._tag === "DataValidationError") assert.strictEqual(error.path, "options.kRawTurns")
    }))
})

describe("ChatMemoryTest.layer", () => {
  it.effect("summarization over the scripted skill by default; the script is the test's", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* feed(memory, "c", 12)
      const context = yield* memory.getContext("c")
      assert.strictEqual(context.summary, "SCRIPTED")
      const calls = yield* (yield* ScriptedSkill).calls
      assert.isTrue(calls.length > 0 && calls.every((call) => call.skill === "summarize"))
    }).pipe(Effect.provide(ChatMemoryTest.layer({
      kRawTurns: 2,
      tokenBudget: 200,
      chunkSummarizeThreshold: 300,
      summaryTokenCap: 60,
      script: { summarize: () => Effect.succeed("SCRIPTED") }
    }))))

  it.effect("the strategy is an option: noop never calls the skill", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* feed(memory, "c", 12)
      assert.strictEqual((yield* memory.getContext("c")).tokenBudget, null)
      assert.deepStrictEqual(yield* (yield* ScriptedSkill).calls, [])
    }).pipe(Effect.provide(ChatMemoryTest.layer({ strategy: "noop" }))))

  it.effect("each build is a fresh store", () =>
    Effect.gen(function*() {
      yield* Effect.provide(
        Effect.flatMap(ChatMemoryService, (memory) => memory.addMessages("c", turn(1))),
        ChatMemoryTest.layer()
      )
      const read = yield* Effect.provide(
        Effect.flatMap(ChatMemoryService, (memory) => Effect.flip(memory.getMessages("c"))),
        ChatMemoryTest.layer()
      )
      assert.strictEqual(read._tag, "ConversationNotFoundError")
    }))
})
