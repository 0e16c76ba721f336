/**
 * The composed memory's configuration: its options, their defaults, and the environment table
 * that reads them (`config`).
 *
 * @example
 * ```ts
 * import { ChatMemory, ChatMemoryConfig } from "effect-chat-memory"
 * import { Config } from "effect"
 *
 * // The environment table (MEMORY_STRATEGY, MEMORY_STORE, DATABASE_URL, …), as `layerConfig()` reads it.
 * export const FromEnvironment = ChatMemory.layerConfig(ChatMemoryConfig.config)
 *
 * // Variables of the app's own choosing; what is left out takes its default.
 * export const FromAppVariables = ChatMemory.layerConfig({
 *   strategy: Config.literal("summarization", "hierarchical")("APP_MEMORY"),
 *   tokenBudget: Config.integer("APP_MEMORY_BUDGET")
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { Config } from "effect"
import * as Environment from "./internal/config/environment.js"
import type * as Internal from "./internal/config/options.js"
import { defaults as internalDefaults } from "./internal/config/options.js"
import { variables as table } from "./internal/config/variables.js"

/**
 * The embedding model of `hybrid` recall: an OpenAI model (or a compatible server, by `apiUrl`), or
 * any `@effect/ai` `EmbeddingModel` layer.
 *
 * @since 0.1.0
 * @category models
 */
export type Embeddings<E = never, R = never> = Internal.Embeddings<E, R>

/**
 * Where the messages are kept: in memory, PGlite (on disk or in memory), a PostgreSQL server, or
 * the app's own `SqlClient` (`sql`).
 *
 * @since 0.1.0
 * @category models
 */
export type Store = Internal.Store

/**
 * Who writes the summaries: the offline extractive skill, an OpenAI model, any `@effect/ai`
 * `LanguageModel` layer, or your own `SkillService` layer.
 *
 * @since 0.1.0
 * @category models
 */
export type Summarizer<E = never, R = never> = Internal.Summarizer<E, R>

/**
 * The composed memory's options: its parts and the strategy's knobs. Everything left out takes its
 * default. `E` and `R` are the errors and requirements of the layers given.
 *
 * @since 0.1.0
 * @category models
 */
export type Options<E = never, R = never> = Internal.Options<E, R>

/**
 * The parts used when the options leave them out.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = internalDefaults

/**
 * The environment table, keyed by the option each variable sets, in documentation order.
 *
 * @since 0.1.0
 * @category constants
 */
export const variables = table

/**
 * The options from the environment table: `MEMORY_STRATEGY`, `MEMORY_STORE`, `DATABASE_URL`, the
 * strategy's knobs, `MEMORY_TOKENIZER` and the summarizer. The summarizer is OpenAI when
 * `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set, the offline skill otherwise. An invalid value fails
 * with a `ConfigError` naming the variable.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = Environment.config

/**
 * The options from the environment table, with `overrides` given in code. The variables that would
 * set an overridden option are not read.
 *
 * @example
 * ```ts
 * import { ChatMemory, ChatMemoryConfig } from "effect-chat-memory"
 *
 * // The environment for everything but the store.
 * export const MemoryLive = ChatMemory.layerConfig(ChatMemoryConfig.configWith({ store: { _tag: "memory" } }))
 * ```
 *
 * @since 0.1.0
 * @category config
 */
export const configWith: <E = never, R = never>(overrides: Options<E, R>) => Config.Config<Options<E, R>> =
  Environment.configWith

/**
 * The OpenAI summarizer's options from `OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `MEMORY_SUMMARIZER_MODEL` and the hosted prompt's variables, for `OpenAiSkill.layerConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const openAi = Environment.openAi

/**
 * The PostgreSQL store's options from `DATABASE_URL`, for `PgStore.layerConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const postgres = Environment.postgres
