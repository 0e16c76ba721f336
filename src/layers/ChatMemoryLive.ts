/**
 * The whole memory composed from configuration, from typed options (`layer`) or the environment
 * (`layerConfig`).
 *
 * @since 0.1.0
 */
import type { EmbeddingModel } from "@effect/ai"
import { Config, type ConfigError, Duration, Effect, Layer, Predicate } from "effect"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import type * as ChatMemoryService from "../services/ChatMemoryService.js"
import type { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { MessageIndex } from "../services/MessageIndex.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import type { UserMemoryService } from "../services/UserMemoryService.js"
import type { UserStore } from "../services/UserStore.js"
import * as HierarchicalStrategy from "../strategies/HierarchicalStrategy.js"
import * as NoopStrategy from "../strategies/NoopStrategy.js"
import * as Recall from "../strategies/Recall.js"
import * as SlidingWindowStrategy from "../strategies/SlidingWindowStrategy.js"
import * as SummarizationStrategy from "../strategies/SummarizationStrategy.js"
import * as ChatMemoryConfig from "./ChatMemoryConfig.js"
import type { Tokenizer } from "./internal/config/variables.js"
import { connectError } from "./internal/connectError.js"
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
 * Everything the composed memory provides: the public service and its parts. Hosts can read the
 * store, count tokens or reuse the summarizer through them.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | ChatMemoryService.ChatMemoryService
  | UserMemoryService
  | Store.Ports
  | MemoryManagementStrategy
  | SkillService
  | TokenCounter

/**
 * The store's layer. SQL stores run their migrations when it is built, on the app's database too
 * for `sql`.
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
        // A failure to build the app's client names its cause, like the other stores.
        Layer.provide(Layer.mapError(client, connectError))
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
    // `gpt-tokenizer` is an optional peer: it loads only with the exact counter.
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
      // The OpenAI client loads only when an OpenAI summarizer is built.
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
 * The options left for the summarization strategies. An option of `ChatMemoryConfig.Options` that
 * `layerStrategy` neither takes out nor passes on fails to compile here, naming it.
 */
const summarizationKnobs = <K extends Partial<SummarizationStrategy.SummarizationOptions>>(
  knobs: K & Record<Exclude<keyof K, keyof SummarizationStrategy.SummarizationOptions>, never>
): Partial<SummarizationStrategy.SummarizationOptions> => knobs

/**
 * The strategy's layer, with the knobs of `options` that the chosen strategy reads.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStrategy = <E = never, R = never>(
  options: ChatMemoryConfig.Options<E, R>
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Store.Ports | SkillService | TokenCounter> => {
  const {
    embeddingBatchTimeout: _embeddingBatchTimeout,
    embeddingBatchTimeoutMillis: _embeddingBatchTimeoutMillis,
    embeddingModel: _embeddingModel,
    embeddings: _embeddings,
    embeddingTimeout: _embeddingTimeout,
    embeddingTimeoutMillis: _embeddingTimeoutMillis,
    embeddingUserScanLimit: _embeddingUserScanLimit,
    maxFactTokens,
    maxFacts,
    maxMessageLength: _maxMessageLength,
    maxNarrativeTokens,
    narrativeFold,
    store: _store,
    strategy,
    summarizer: _summarizer,
    tokenizer: _tokenizer,
    ...knobs
  } = options
  const summarization = summarizationKnobs(knobs)
  switch (strategy ?? ChatMemoryConfig.defaults.strategy) {
    case "noop":
      return NoopStrategy.layer
    case "sliding-window":
      return SlidingWindowStrategy.layer(
        knobs.tokenBudget === undefined ? {} : { tokenBudget: knobs.tokenBudget }
      )
    case "summarization":
      return SummarizationStrategy.layer(summarization)
    case "hierarchical":
      return HierarchicalStrategy.layer({
        ...summarization,
        ...(maxFacts === undefined ? {} : { maxFacts }),
        ...(maxFactTokens === undefined ? {} : { maxFactTokens }),
        ...(maxNarrativeTokens === undefined ? {} : { maxNarrativeTokens }),
        ...(narrativeFold === undefined ? {} : { narrativeFold })
      })
  }
}

const millis = (value: number | undefined) => (value === undefined ? undefined : Duration.millis(value))

/**
 * The message index and the user port. They search by meaning too (`Recall.layerHybrid`, with its
 * `Recall.EmbeddingJobs`) when a summarizing strategy recalls with `hybrid` and `embeddings` are
 * given; otherwise they are the store's. Vectors are stored under the OpenAI model's name unless
 * `embeddingModel` names another.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerRecall = <E = never, R = never>(
  options: ChatMemoryConfig.Options<E, R>
): Layer.Layer<MessageIndex | UserStore, DataValidationError | E, MessageIndex | UserStore | R> => {
  const strategy = options.strategy ?? ChatMemoryConfig.defaults.strategy
  const embeddings = options.embeddings
  if (
    embeddings === undefined || options.recall !== "hybrid" ||
    (strategy !== "summarization" && strategy !== "hierarchical")
  ) return Layer.effectContext(Effect.context<MessageIndex | UserStore>())
  const model = options.embeddingModel ?? (embeddings._tag === "openai" ? embeddings.model : undefined)
  return Recall.layerHybrid({
    model,
    queryTimeout: options.embeddingTimeout ?? millis(options.embeddingTimeoutMillis),
    batchTimeout: options.embeddingBatchTimeout ?? millis(options.embeddingBatchTimeoutMillis),
    userScanLimit: options.embeddingUserScanLimit,
    concurrency: options.summarizationConcurrency
  }).pipe(Layer.provide(layerEmbeddings(embeddings)))
}

/**
 * The memory from typed options. What they leave out takes its default (`ChatMemoryConfig`). An
 * invalid knob fails with a `DataValidationError` naming the option. A store that cannot be opened
 * fails with a `RepositoryError`. Closing the layer interrupts background summarizations and closes
 * the store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: ChatMemoryConfig.Options<E, R> = {}
): Layer.Layer<Services, DataValidationError | RepositoryError | E, R> =>
  Service.layerWith({ maxMessageLength: options.maxMessageLength }).pipe(
    Layer.provideMerge(layerStrategy(options)),
    Layer.provideMerge(layerRecall(options)),
    Layer.provideMerge(layerSkill(options.summarizer ?? ChatMemoryConfig.defaults.summarizer)),
    Layer.provideMerge(layerStore(options.store ?? ChatMemoryConfig.defaults.store)),
    Layer.provideMerge(layerTokenCounter(options.tokenizer ?? ChatMemoryConfig.defaults.tokenizer))
  )

/** Whether `value` is a `Config.Wrap`: a `Config`, or a record whose values are. */
const isWrap = <A>(value: Config.Config.Wrap<A> | A): value is Config.Config.Wrap<A> => wraps(value)

const wraps = (value: unknown): boolean =>
  Config.isConfig(value) || (Predicate.isRecord(value) && !Layer.isLayer(value) && Object.values(value).every(wraps))

/**
 * The memory from configuration. Without an argument, it reads the environment table
 * (`ChatMemoryConfig.config`). With a `Config.Wrap` of the options, it reads only the app's own
 * variables, and what they leave out takes its default. An invalid value fails with a
 * `ConfigError` naming it. Layers given bring their own errors and requirements.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: {
  <E = never, R = never>(
    config?: Config.Config.Wrap<ChatMemoryConfig.Options<E, R>>
  ): Layer.Layer<Services, ConfigError.ConfigError | DataValidationError | RepositoryError | E, R>
  /**
   * @deprecated Pass `ChatMemoryConfig.configWith(overrides)`: the environment with options given in
   * code.
   */
  <E = never, R = never>(
    overrides: ChatMemoryConfig.Options<E, R>
  ): Layer.Layer<Services, ConfigError.ConfigError | DataValidationError | RepositoryError | E, R>
} = <E = never, R = never>(
  config?: Config.Config.Wrap<ChatMemoryConfig.Options<E, R>> | ChatMemoryConfig.Options<E, R>
): Layer.Layer<Services, ConfigError.ConfigError | DataValidationError | RepositoryError | E, R> =>
  Layer.unwrapEffect(Effect.map(
    config === undefined
      ? ChatMemoryConfig.configWith<E, R>({})
      : isWrap<ChatMemoryConfig.Options<E, R>>(config)
      ? Config.unwrap(config)
      : ChatMemoryConfig.configWith<E, R>(config),
    layer
  ))
