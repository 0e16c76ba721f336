/**
 * The whole memory composed from configuration: store, token counter, summarizer skill and
 * strategy under `ChatMemoryService`, from typed options (`layer`) or from the environment
 * (`layerConfig`).
 *
 * @since 0.1.0
 */
import type { EmbeddingModel } from "@effect/ai"
import { type ConfigError, Effect, Layer } from "effect"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { RepositoryError } from "../errors/RepositoryError.js"
import type * as ChatMemoryService from "../services/ChatMemoryService.js"
import type { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import * as HierarchicalStrategy from "../strategies/HierarchicalStrategy.js"
import * as NoopStrategy from "../strategies/NoopStrategy.js"
import * as SlidingWindowStrategy from "../strategies/SlidingWindowStrategy.js"
import type { SummarizationOptions } from "../strategies/SummarizationOptions.js"
import * as SummarizationStrategy from "../strategies/SummarizationStrategy.js"
import * as ChatMemoryConfig from "./ChatMemoryConfig.js"
import type { Tokenizer } from "./ChatMemoryVariables.js"
import * as OptionalPeer from "./internal/optionalPeer.js"
import * as Service from "./internal/service.js"
import * as ExtractiveSkill from "./skills/ExtractiveSkill.js"
import * as LanguageModelSkill from "./skills/LanguageModelSkill.js"
import * as MemoryStore from "./store/MemoryStore.js"
import * as PgStore from "./store/PgStore.js"
import * as SqlStore from "./store/SqlStore.js"
import type * as Store from "./store/Store.js"
import * as ApproximateTokenCounter from "./tokens/ApproximateTokenCounter.js"

/**
 * Everything the composed memory provides: the public service, and the parts it is made of (for
 * hosts that read the store directly, count tokens the same way, or reuse the summarizer).
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | ChatMemoryService.ChatMemoryService
  | Store.Ports
  | MemoryManagementStrategy
  | SkillService
  | TokenCounter

/**
 * The store's layer; the SQL stores run their migrations when it is built (on the app's database
 * too, for `sql`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStore = (store: ChatMemoryConfig.Store): Layer.Layer<Store.Ports, RepositoryError> => {
  switch (store._tag) {
    case "memory":
      return MemoryStore.layer
    case "pglite": {
      const { _tag, ...options } = store
      return PgStore.layerPglite(options)
    }
    case "postgres": {
      const { _tag, ...options } = store
      return PgStore.layer(options)
    }
    case "sql": {
      const { _tag, layer: client, ...options } = store
      return SqlStore.layer(options).pipe(
        Layer.provide(Layer.mapError(client, (cause) => new RepositoryError({ operation: "connect", cause })))
      )
    }
  }
}

/**
 * The token counter's layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTokenCounter = (tokenizer: Tokenizer): Layer.Layer<TokenCounter> =>
  tokenizer === "exact"
    // `gpt-tokenizer` is an optional peer dependency: loaded with the exact counter, when it is used.
    ? Layer.unwrapEffect(
      Effect.map(
        Effect.orDie(OptionalPeer.load("gpt-tokenizer", () => import("./tokens/ExactTokenCounter.js"))),
        (exact) => exact.layer
      )
    )
    : ApproximateTokenCounter.layer

/**
 * The summarizer skill's layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSkill = <E = never, R = never>(
  summarizer: ChatMemoryConfig.Summarizer<E, R>
): Layer.Layer<SkillService, E, TokenCounter | R> => {
  switch (summarizer._tag) {
    case "extractive":
      return ExtractiveSkill.layer
    case "openai": {
      const { _tag, ...options } = summarizer
      // The OpenAI client is loaded when an OpenAI summarizer is built, not with the package.
      return Layer.unwrapEffect(
        Effect.map(
          Effect.orDie(OptionalPeer.load("@effect/ai-openai", () => import("./skills/OpenAiSkill.js"))),
          (OpenAiSkill) => OpenAiSkill.layer(options)
        )
      )
    }
    case "language-model": {
      const { _tag, layer: model, ...options } = summarizer
      return LanguageModelSkill.layer(options).pipe(Layer.provide(model))
    }
    case "skill":
      return summarizer.layer
  }
}

/**
 * The embedding model's layer (hybrid recall).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbeddings = <E = never, R = never>(
  embeddings: ChatMemoryConfig.Embeddings<E, R>
): Layer.Layer<EmbeddingModel.EmbeddingModel, E, R> => {
  switch (embeddings._tag) {
    case "openai": {
      const { _tag, ...options } = embeddings
      return Layer.unwrapEffect(
        Effect.map(
          Effect.orDie(OptionalPeer.load("@effect/ai-openai", () => import("./embeddings/OpenAiEmbeddings.js"))),
          (OpenAiEmbeddings) => OpenAiEmbeddings.layer(options)
        )
      )
    }
    case "embedding-model":
      return embeddings.layer
  }
}

/**
 * The strategy's layer, with the knobs of `options` that the chosen strategy reads; with
 * `embeddings`, the summarizing strategies get that embedding model (for `recall: "hybrid"`),
 * storing its vectors under the OpenAI model's name unless `embeddingModel` says otherwise.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStrategy = <E = never, R = never>(
  options: ChatMemoryConfig.Options<E, R>
): Layer.Layer<MemoryManagementStrategy, DataValidationError | E, Store.Ports | SkillService | TokenCounter | R> => {
  const {
    maxFactTokens,
    maxFacts,
    maxMessageLength: _maxMessageLength,
    maxNarrativeTokens,
    narrativeFold,
    embeddings,
    store: _store,
    strategy,
    summarizer: _summarizer,
    tokenizer: _tokenizer,
    ...knobs
  } = options
  const summarization: Partial<SummarizationOptions> =
    embeddings?._tag === "openai" && knobs.embeddingModel === undefined
      ? { ...knobs, embeddingModel: embeddings.model }
      : knobs
  const withEmbeddings = <E1, R1>(strategyLayer: Layer.Layer<MemoryManagementStrategy, E1, R1>) =>
    embeddings === undefined ? strategyLayer : strategyLayer.pipe(Layer.provide(layerEmbeddings(embeddings)))
  switch (strategy ?? ChatMemoryConfig.defaults.strategy) {
    case "noop":
      return NoopStrategy.layer
    case "sliding-window":
      return SlidingWindowStrategy.layer(
        knobs.tokenBudget === undefined ? {} : { tokenBudget: knobs.tokenBudget }
      )
    case "summarization":
      return withEmbeddings(SummarizationStrategy.layer(summarization))
    case "hierarchical":
      return withEmbeddings(HierarchicalStrategy.layer({
        ...summarization,
        ...(maxFacts === undefined ? {} : { maxFacts }),
        ...(maxFactTokens === undefined ? {} : { maxFactTokens }),
        ...(maxNarrativeTokens === undefined ? {} : { maxNarrativeTokens }),
        ...(narrativeFold === undefined ? {} : { narrativeFold })
      }))
  }
}

/**
 * The memory from typed options; what they leave out takes its default (`ChatMemoryConfig`).
 * Invalid knobs fail the construction with a `DataValidationError` naming the option; a store
 * that cannot be opened, with a `RepositoryError`. Closing the layer interrupts the background
 * summarizations and closes the store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: ChatMemoryConfig.Options<E, R> = {}
): Layer.Layer<Services, DataValidationError | RepositoryError | E, R> =>
  Service.layerWith({ maxMessageLength: options.maxMessageLength }).pipe(
    Layer.provideMerge(layerStrategy(options)),
    Layer.provideMerge(layerSkill(options.summarizer ?? ChatMemoryConfig.defaults.summarizer)),
    Layer.provideMerge(layerStore(options.store ?? ChatMemoryConfig.defaults.store)),
    Layer.provideMerge(layerTokenCounter(options.tokenizer ?? ChatMemoryConfig.defaults.tokenizer))
  )

/**
 * The memory configured from the environment (`ChatMemoryConfig.config`, DESIGN §6), with
 * `overrides` given in code (`ChatMemoryConfig.configWith`): an option given there replaces the
 * variables that would set it, which are then neither read nor checked (a store given in code
 * leaves `MEMORY_STORE` and `DATABASE_URL` alone; a `language-model` summarizer, the OpenAI
 * variables). An invalid variable still read fails the construction with a `ConfigError` naming
 * it and, for a choice, the allowed values; the layers given bring their own errors and
 * requirements.
 *
 * ```ts
 * ChatMemoryLive.layerConfig() // the environment alone
 * ChatMemoryLive.layerConfig({ store: { _tag: "sql", layer: AppDbLive } })
 * ChatMemoryLive.layerConfig({ summarizer: { _tag: "language-model", layer: OpenAiLanguageModel.model("gpt-4o-mini") } })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = <E = never, R = never>(
  overrides: ChatMemoryConfig.Options<E, R> = {}
): Layer.Layer<Services, ConfigError.ConfigError | DataValidationError | RepositoryError | E, R> =>
  Layer.unwrapEffect(Effect.map(ChatMemoryConfig.configWith(overrides), layer))
