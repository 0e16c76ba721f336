/**
 * `ChatMemoryLive.layerConfig(overrides)`: the environment's configuration with options given in
 * code. An option given is taken as it is and the variables that would set it are neither read nor
 * checked; a `language-model` summarizer takes a provider's layer with its own errors and
 * requirements, and records the model its responses name.
 */
import { type LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Config, ConfigError, ConfigProvider, Effect, Layer, Redacted, Schema } from "effect"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { oneTurnInput } from "./fixtures/messages.js"

type Env = Record<string, string>

const provider = (env: Env) => ConfigProvider.fromMap(new Map(Object.entries(env)))

/** A turn stored and read back: the memory works. */
const roundTrip = Effect.gen(function*() {
  const memory = yield* ChatMemoryService
  yield* memory.addMessages("c", [{ role: "user", content: "Ship order A-1001 to Lyon." }])
  return yield* memory.getContext("c")
})

const summarizeInput = oneTurnInput("Order ORD-1 costs $5.00, due May 3.", 13)

class ModelDown extends Schema.TaggedError<ModelDown>()("ModelDown", {}) {}

describe("ChatMemoryLive.layerConfig with overrides", () => {
  it.effect("a store given in code: MEMORY_STORE=postgres without DATABASE_URL is not read", () =>
    Effect.gen(function*() {
      const env = { MEMORY_STORE: "postgres", MEMORY_PROMPT_TOKEN_BUDGET: "1234" }
      // The environment alone is refused, naming the variable it lacks.
      const refused = yield* Effect.flip(Effect.withConfigProvider(ChatMemoryConfig.config, provider(env)))
      assert.isTrue(ConfigError.isConfigError(refused))
      assert.include(String(refused), "DATABASE_URL")
      // With the store in code, the rest still comes from the environment.
      const context = yield* roundTrip.pipe(
        Effect.provide(ChatMemoryLive.layerConfig(ChatMemoryConfig.configWith({ store: { _tag: "memory" } }))),
        Effect.withConfigProvider(provider(env))
      )
      assert.deepStrictEqual([context.recent.length, context.tokenBudget], [1, 1234])
    }))

  it.effect("a knob given in code: its variable is not read, even when invalid", () =>
    Effect.gen(function*() {
      const env = { MEMORY_PROMPT_TOKEN_BUDGET: "lots", MEMORY_K_RAW_TURNS: "5" }
      const refused = yield* Effect.flip(Effect.withConfigProvider(ChatMemoryConfig.config, provider(env)))
      assert.include(String(refused), "MEMORY_PROMPT_TOKEN_BUDGET")
      const options = yield* Effect.withConfigProvider(
        ChatMemoryConfig.configWith({ tokenBudget: 5000 }),
        provider(env)
      )
      assert.deepStrictEqual([options.tokenBudget, options.kRawTurns], [5000, 5])
      const context = yield* roundTrip.pipe(
        Effect.provide(ChatMemoryLive.layerConfig(ChatMemoryConfig.configWith({ tokenBudget: 5000 }))),
        Effect.withConfigProvider(provider(env))
      )
      assert.strictEqual(context.tokenBudget, 5000)
    }))

  it.effect("a summarizer given in code: the OpenAI variables are not read, unless hybrid recall needs them", () =>
    Effect.gen(function*() {
      const env = { OPENAI_BASE_URL: "not a url", MEMORY_SUMMARIZER_MODEL: "" }
      const options = yield* Effect.withConfigProvider(
        ChatMemoryConfig.configWith({ summarizer: { _tag: "extractive" } }),
        provider(env)
      )
      assert.deepStrictEqual(options.summarizer, { _tag: "extractive" })
      // Hybrid recall still takes its embeddings from them: then they are read, and checked.
      const hybrid = yield* Effect.flip(Effect.withConfigProvider(
        ChatMemoryConfig.configWith({ summarizer: { _tag: "extractive" } }),
        provider({ ...env, MEMORY_RECALL: "hybrid" })
      ))
      assert.include(String(hybrid), "OPENAI_BASE_URL")
      // Unless the embeddings are given too.
      const embedded = yield* Effect.withConfigProvider(
        ChatMemoryConfig.configWith({
          summarizer: { _tag: "extractive" },
          embeddings: { _tag: "openai", apiKey: Redacted.make(Fake.apiKey), model: "text-embedding-3-small" }
        }),
        provider({ ...env, MEMORY_RECALL: "hybrid" })
      )
      assert.strictEqual(embedded.recall, "hybrid")
    }))

  it.scoped("a language-model summarizer: the provider's layer with its requirements; the model named by its responses", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const client = OpenAiClient.layer({ apiKey: Redacted.make(Fake.apiKey), apiUrl: fake.apiUrl }).pipe(
        Layer.provide(NodeHttpClient.layerUndici)
      )
      // `OpenAiLanguageModel.model` needs an `OpenAiClient`: the composed memory needs it in turn.
      const MemoryLive = ChatMemoryLive.layerConfig(ChatMemoryConfig.configWith({
        summarizer: { _tag: "language-model", layer: OpenAiLanguageModel.model("summarizer-model") }
      })).pipe(Layer.provide(client))
      const summary = yield* Effect.flatMap(SkillService, (skill) => skill.summarize(summarizeInput)).pipe(
        Effect.provide(MemoryLive),
        Effect.withConfigProvider(provider({}))
      )
      assert.deepStrictEqual([summary.value, summary.model], ["ORD-1 costs $5.00.", "summarizer-model"])
      const [request] = yield* fake.requests
      assert.strictEqual(request?.body.model, "summarizer-model")
    }).pipe(Effect.provide(Fake.layer(Fake.text("ORD-1 costs $5.00.")))))

  it.effect("a language-model layer's own error fails the composed memory, typed", () =>
    Effect.gen(function*() {
      const down: Layer.Layer<LanguageModel.LanguageModel, ModelDown> = Layer.fail(new ModelDown())
      const error = yield* Effect.flip(
        Layer.build(
          ChatMemoryLive.layerConfig(
            ChatMemoryConfig.configWith({ summarizer: { _tag: "language-model", layer: down } })
          )
        ).pipe(
          Effect.scoped,
          Effect.withConfigProvider(provider({}))
        )
      )
      assert.strictEqual(error._tag, "ModelDown")
    }))

  it.effect("the previous form, options in code over the environment, still works (deprecated)", () =>
    Effect.gen(function*() {
      const env = { MEMORY_PROMPT_TOKEN_BUDGET: "lots", MEMORY_K_RAW_TURNS: "5" }
      const context = yield* roundTrip.pipe(
        Effect.provide(ChatMemoryLive.layerConfig({ tokenBudget: 5000 })),
        Effect.withConfigProvider(provider(env))
      )
      assert.strictEqual(context.tokenBudget, 5000)
    }))
})

describe("ChatMemoryLive.layerConfig with the app's own variables", () => {
  it.effect("reads the variables given, and no variable of the table", () =>
    Effect.gen(function*() {
      // The table's variables are set, invalid: none is read.
      const env = { APP_BUDGET: "1234", MEMORY_PROMPT_TOKEN_BUDGET: "lots", MEMORY_STRATEGY: "lru" }
      const context = yield* roundTrip.pipe(
        Effect.provide(ChatMemoryLive.layerConfig({ tokenBudget: Config.integer("APP_BUDGET") })),
        Effect.withConfigProvider(provider(env))
      )
      // What the app left out takes its default: the summarization strategy, K of 3.
      assert.deepStrictEqual([context.tokenBudget, context.strategy], [1234, "summarization"])
    }))

  it.effect("a variable of the app's that is invalid fails the construction, naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(ChatMemoryLive.layerConfig({ tokenBudget: Config.integer("APP_BUDGET") })).pipe(
          Effect.scoped,
          Effect.withConfigProvider(provider({ APP_BUDGET: "lots" }))
        )
      )
      assert.isTrue(ConfigError.isConfigError(error))
      assert.include(String(error), "APP_BUDGET")
    }))

  it.effect("a whole Config of the options is read as it is", () =>
    Effect.gen(function*() {
      const context = yield* roundTrip.pipe(
        Effect.provide(ChatMemoryLive.layerConfig(Config.succeed({ strategy: "sliding-window" as const }))),
        Effect.withConfigProvider(provider({ MEMORY_STRATEGY: "lru" }))
      )
      assert.strictEqual(context.strategy, "sliding-window")
    }))
})
