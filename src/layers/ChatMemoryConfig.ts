/**
 * The configuration of the composed memory (`ChatMemoryLive`): the typed options, their defaults,
 * and how they are read from the environment through Effect `Config` (DESIGN §6).
 *
 * @since 0.1.0
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import type { SqlClient } from "@effect/sql"
import { Config, ConfigError, Either, type Layer, Option, Redacted } from "effect"
import { MaxContentLength } from "../domain/Message.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import { defaults as summarizationDefaults } from "../strategies/SummarizationOptions.js"
import type * as ChatMemory from "./ChatMemory.js"
import type * as OpenAiEmbeddings from "./embeddings/OpenAiEmbeddings.js"
import * as OpenAiModels from "./internal/openAiModels.js"
import type * as LanguageModelSkill from "./skills/LanguageModelSkill.js"
import type * as OpenAiSkill from "./skills/OpenAiSkill.js"
import type * as PgliteClient from "./store/PgliteClient.js"
import type * as PgRepository from "./store/PgRepository.js"
import type * as SqlRepository from "./store/SqlRepository.js"

/**
 * The strategies configuration can choose.
 *
 * @since 0.1.0
 * @category constants
 */
export const strategies = ["noop", "sliding-window", "summarization", "hierarchical"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type Strategy = typeof strategies[number]

/**
 * The stores configuration can choose: in memory, embedded PGlite, or a PostgreSQL server.
 *
 * @since 0.1.0
 * @category constants
 */
export const stores = ["memory", "pglite", "postgres"] as const

/**
 * The token counters: `approximate` (characters / 4) or `exact` (OpenAI's o200k encoding).
 *
 * @since 0.1.0
 * @category constants
 */
export const tokenizers = ["approximate", "exact"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type Tokenizer = typeof tokenizers[number]

/**
 * The summary modes of the summarization strategy.
 *
 * @since 0.1.0
 * @category constants
 */
export const summaryModes = ["incremental", "full", "layered"] as const

/**
 * The views of the summarizing strategies: `full` (the newest turns that fit) or `stable`
 * (every unsummarized turn, append-only between folds).
 *
 * @since 0.1.0
 * @category constants
 */
export const contextViews = ["full", "stable"] as const

/**
 * Recall for contexts asked with a query: `lexical` (full-text search of the store, offline),
 * `hybrid` (lexical fused with a search by meaning, over an embedding model) or `off`.
 *
 * @since 0.1.0
 * @category constants
 */
export const recallModes = ["off", "lexical", "hybrid"] as const

/**
 * The embedding model of `hybrid` recall: a model behind the OpenAI API (or any compatible server,
 * by `apiUrl`), or any `@effect/ai` `EmbeddingModel` layer (typed options only). Its vectors are
 * stored under the strategy's `embeddingModel` name, the OpenAI model's by default.
 *
 * @since 0.1.0
 * @category models
 */
export type Embeddings =
  | ({ readonly _tag: "openai" } & OpenAiEmbeddings.OpenAiEmbeddings.Options)
  | {
    readonly _tag: "embedding-model"
    /** The provider's layer, with its client provided. */
    readonly layer: Layer.Layer<EmbeddingModel.EmbeddingModel>
  }

/**
 * Where the messages are kept. PGlite without `dataDir` keeps them in memory, for the life of the
 * layer; a new database starts from `template` (`PgliteClient.Options`: the bundled cluster for a
 * new data directory, `initdb` in memory, unless set). `sql` keeps them in the app's own database: the memory's tables (all prefixed
 * `chat_memory_`, migrations recorded apart) beside the app's, over the app's `SqlClient` layer
 * (typed options only).
 *
 * @since 0.1.0
 * @category models
 */
export type Store =
  | { readonly _tag: "memory" }
  | ({ readonly _tag: "pglite" } & PgliteClient.Options)
  | ({ readonly _tag: "postgres" } & PgRepository.Options)
  | ({
    readonly _tag: "sql"
    /**
     * The app's `SqlClient` layer, PostgreSQL or PGlite (e.g. `PgClient.layer(...)`). Built once
     * per composition as any layer: the app and the memory share its pool when both are built
     * from the same layer value. A failure to build it is a `RepositoryError` (`connect`).
     */
    readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
  } & SqlRepository.Options)

/**
 * Who writes the summaries: the offline extractive skill (no model, no key), a model behind the
 * OpenAI API (or any compatible server, by `apiUrl`), any `@effect/ai` `LanguageModel` layer (any
 * provider, with our prompts), or a `SkillService` layer of your own. The last two are for typed
 * options (`ChatMemoryLive.layer`); the environment selects one of the first two.
 *
 * @since 0.1.0
 * @category models
 */
export type Summarizer =
  | { readonly _tag: "extractive" }
  | ({ readonly _tag: "openai" } & OpenAiSkill.OpenAiSkill.Options)
  | ({
    readonly _tag: "language-model"
    /** The provider's layer, e.g. `AnthropicLanguageModel.model(...)` with its client provided. */
    readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  } & LanguageModelSkill.LanguageModelSkill.Options)
  | {
    readonly _tag: "skill"
    /** A `SkillService` of your own; it may use the memory's `TokenCounter`. */
    readonly layer: Layer.Layer<SkillService, never, TokenCounter>
  }

/**
 * The options of the composed memory: the parts to use, and the knobs of the strategy (those of
 * `HierarchicalStrategy`, a superset of those of `SummarizationStrategy`; the sliding window reads
 * only `promptTokenBudget`, the no-op strategy none). Everything left out takes its default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Partial<HierarchicalOptions>, ChatMemory.Options {
  /** `summarization` by default. */
  readonly strategy?: Strategy | undefined
  /** PGlite in memory by default. */
  readonly store?: Store | undefined
  /** The extractive skill by default. */
  readonly summarizer?: Summarizer | undefined
  /** `approximate` by default. */
  readonly tokenizer?: Tokenizer | undefined
  /** The embedding model of `recall: "hybrid"`; required by it, unused otherwise. */
  readonly embeddings?: Embeddings | undefined
}

/**
 * The parts used when the options leave them out.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: {
  readonly strategy: Strategy
  readonly store: Store
  readonly summarizer: Summarizer
  readonly tokenizer: Tokenizer
} = {
  strategy: "summarization",
  store: { _tag: "memory" },
  summarizer: { _tag: "extractive" },
  tokenizer: "approximate"
}

/**
 * The environment variables read by `config`, by the option they set.
 *
 * @since 0.1.0
 * @category constants
 */
export const variables = {
  strategy: "MEMORY_STRATEGY",
  store: "MEMORY_STORE",
  dataDir: "MEMORY_DATA_DIR",
  databaseUrl: "DATABASE_URL",
  kRawTurns: "MEMORY_K_RAW_TURNS",
  promptTokenBudget: "MEMORY_PROMPT_TOKEN_BUDGET",
  chunkSummarizeThreshold: "MEMORY_CHUNK_SUMMARIZE_THRESHOLD",
  highWater: "MEMORY_HIGH_WATER",
  lowWater: "MEMORY_LOW_WATER",
  view: "MEMORY_CONTEXT_VIEW",
  recall: "MEMORY_RECALL",
  recallTokenBudget: "MEMORY_RECALL_TOKEN_BUDGET",
  embeddingModel: "MEMORY_EMBEDDING_MODEL",
  maxMessageLength: "MEMORY_MAX_MESSAGE_LENGTH",
  summarizationConcurrency: "MEMORY_SUMMARIZATION_CONCURRENCY",
  summaryTokenCap: "MEMORY_SUMMARY_TOKEN_CAP",
  mode: "MEMORY_SUMMARY_MODE",
  summarizerModel: "MEMORY_SUMMARIZER_MODEL",
  summaryPromptId: "PROMPT_ID_SUMMARY_GLOBAL",
  summaryPromptVersion: "PROMPT_VERSION_SUMMARY_GLOBAL",
  tokenizer: "MEMORY_TOKENIZER",
  openAiApiKey: "OPENAI_API_KEY",
  openAiBaseUrl: "OPENAI_BASE_URL"
} as const

const choice = <const A extends ReadonlyArray<string>>(values: A, name: string, fallback: A[number]) =>
  Config.literal(...values)(name).pipe(Config.withDefault(fallback))

const decimalDigits = /^[0-9]+$/

/**
 * A whole number written in decimal digits only: `Config.integer` would also take `0x1000`,
 * `0b11` or `1e3`, which nobody means for a token budget.
 */
const integer = (name: string, fallback: number, max: number) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const value = Number(text)
      return decimalDigits.test(text) && value >= 1 && value <= max
        ? Either.right(value)
        : Either.left(
          ConfigError.InvalidData([], `must be an integer from 1 to ${max} in decimal digits, got "${text}"`)
        )
    }),
    Config.withDefault(fallback)
  )

/** A share from 0 to 1, in decimal notation (`0.9`, `0.25`, `1`). */
const share = (name: string, fallback: number) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const value = Number(text)
      return /^[0-9]+(\.[0-9]+)?$/.test(text) && value >= 0 && value <= 1
        ? Either.right(value)
        : Either.left(ConfigError.InvalidData([], `must be a number from 0 to 1 (e.g. 0.9), got "${text}"`))
    }),
    Config.withDefault(fallback)
  )

/** An optional value that, when set, is not blank: a blank value is a mistake, not an absence. */
const optionalNonBlank = (name: string) =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({
        message: "must not be blank (unset it instead)",
        validation: (value) => value.trim().length > 0
      })
    )
  )

const isPostgresUrl = (url: string): boolean =>
  URL.canParse(url) && ["postgres:", "postgresql:"].includes(new URL(url).protocol)

const isHttpUrl = (url: string): boolean => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol)

/** One word of a hosted prompt's reference: not blank, no spaces or control characters. */
const promptWord = (name: string, example: string) =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({
        message: `must be ${example}: not blank, no spaces`,
        validation: (value) => /^[^\s\p{Cc}]+$/u.test(value)
      })
    )
  )

/**
 * The hosted OpenAI prompt of the summarizer, from `PROMPT_ID_SUMMARY_GLOBAL` and
 * `PROMPT_VERSION_SUMMARY_GLOBAL` (DESIGN §6): none when neither is set. The version is optional
 * (unset: the version published on OpenAI); a version without an id is an error.
 *
 * @since 0.1.0
 * @category config
 */
export const summaryPrompt: Config.Config<Option.Option<OpenAiSkill.OpenAiSkill.HostedPrompt>> = Config.all({
  id: promptWord(variables.summaryPromptId, "a prompt id such as pmpt_abc123"),
  version: promptWord(variables.summaryPromptVersion, "a prompt version such as 2")
}).pipe(
  Config.mapOrFail(({ id, version }) =>
    Option.isNone(id)
      ? Option.isNone(version)
        ? Either.right(Option.none())
        : Either.left(ConfigError.InvalidData(
          [variables.summaryPromptId],
          `is required when ${variables.summaryPromptVersion} is set`
        ))
      : Either.right(Option.some(Option.match(version, {
        onNone: (): OpenAiSkill.OpenAiSkill.HostedPrompt => ({ id: id.value }),
        onSome: (version): OpenAiSkill.OpenAiSkill.HostedPrompt => ({ id: id.value, version })
      })))
  )
)

/**
 * The summarizer's OpenAI options from the environment: `OPENAI_API_KEY` (redacted),
 * `OPENAI_BASE_URL`, `MEMORY_SUMMARIZER_MODEL` (`gpt-4o-mini` by default) and the hosted
 * summary prompt (`summaryPrompt`). A key is required unless a base URL is set (local servers
 * often need none); an empty key counts as none. For `OpenAiSkill.layerConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const openAi: Config.Config<OpenAiSkill.OpenAiSkill.Options> = Config.all({
  apiKey: Config.option(Config.redacted(variables.openAiApiKey)).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
  ),
  apiUrl: Config.option(
    Config.string(variables.openAiBaseUrl).pipe(
      Config.validate({ message: "must be an http(s) URL, e.g. http://localhost:11434/v1", validation: isHttpUrl })
    )
  ),
  model: Config.string(variables.summarizerModel).pipe(
    Config.validate({ message: "must not be empty", validation: (model) => model.trim().length > 0 }),
    Config.withDefault(OpenAiModels.summarizer)
  ),
  summaryPrompt
}).pipe(
  Config.mapOrFail(({ apiKey, apiUrl, model, summaryPrompt }) =>
    Option.isNone(apiKey) && Option.isNone(apiUrl)
      ? Either.left(
        ConfigError.MissingData(
          [variables.openAiApiKey],
          `${variables.openAiApiKey} is required unless ${variables.openAiBaseUrl} points to a server that needs no key`
        )
      )
      : Either.right({
        apiKey: Option.getOrUndefined(apiKey),
        apiUrl: Option.getOrUndefined(apiUrl),
        model: model.trim(),
        summaryPrompt: Option.getOrUndefined(summaryPrompt)
      })
  )
)

/**
 * The PostgreSQL store's options from the environment: `DATABASE_URL` (redacted), a
 * `postgres://` or `postgresql://` URL. For `PgRepository.layerConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const postgres: Config.Config<PgRepository.Options> = Config.redacted(variables.databaseUrl).pipe(
  Config.validate({
    message: "must be a postgres:// or postgresql:// URL",
    validation: (url) => isPostgresUrl(Redacted.value(url))
  }),
  Config.map((url) => ({ url }))
)

const summarizing = new Set<Strategy>(["summarization", "hierarchical"])

const raw = Config.all({
  strategy: choice(strategies, variables.strategy, defaults.strategy),
  // Unset: PGlite in MEMORY_DATA_DIR when that is set, else the in-memory store.
  store: Config.option(Config.literal(...stores)(variables.store)),
  dataDir: optionalNonBlank(variables.dataDir),
  databaseUrl: Config.option(Config.redacted(variables.databaseUrl)),
  kRawTurns: integer(variables.kRawTurns, summarizationDefaults.kRawTurns, 1000),
  promptTokenBudget: integer(
    variables.promptTokenBudget,
    summarizationDefaults.promptTokenBudget,
    Number.MAX_SAFE_INTEGER
  ),
  chunkSummarizeThreshold: Config.option(
    Config.string(variables.chunkSummarizeThreshold).pipe(
      Config.mapOrFail((text) =>
        decimalDigits.test(text) && Number(text) >= 1 && Number(text) <= Number.MAX_SAFE_INTEGER
          ? Either.right(Number(text))
          : Either.left(ConfigError.InvalidData([], `must be a positive integer in decimal digits, got "${text}"`))
      )
    )
  ),
  highWater: share(variables.highWater, summarizationDefaults.highWater),
  lowWater: share(variables.lowWater, summarizationDefaults.lowWater),
  view: choice(contextViews, variables.view, summarizationDefaults.view),
  recall: choice(recallModes, variables.recall, summarizationDefaults.recall),
  recallTokenBudget: share(variables.recallTokenBudget, summarizationDefaults.recallTokenBudget),
  embeddingModel: Config.string(variables.embeddingModel).pipe(
    Config.validate({ message: "must not be blank", validation: (model) => model.trim().length > 0 }),
    Config.withDefault(OpenAiModels.embeddings)
  ),
  maxMessageLength: integer(variables.maxMessageLength, MaxContentLength, MaxContentLength),
  summarizationConcurrency: integer(
    variables.summarizationConcurrency,
    summarizationDefaults.summarizationConcurrency,
    1000
  ),
  summaryTokenCap: integer(variables.summaryTokenCap, summarizationDefaults.summaryTokenCap, Number.MAX_SAFE_INTEGER),
  mode: choice(summaryModes, variables.mode, summarizationDefaults.mode),
  tokenizer: choice(tokenizers, variables.tokenizer, defaults.tokenizer),
  // A key or a base URL selects the OpenAI skill; with neither, the offline one.
  openAi: Config.option(openAi),
  // Read apart too: a hosted prompt without the OpenAI skill is an error, not ignored.
  summaryPromptId: Config.option(Config.string(variables.summaryPromptId)),
  // And a summarizer model: set with nothing to reach it, it would silently mean the offline skill.
  summarizerModel: Config.option(Config.string(variables.summarizerModel))
})

type Raw = Config.Config.Success<typeof raw>

const storeOf = (settings: Raw): Either.Either<Store, ConfigError.ConfigError> => {
  const store = Option.getOrElse(settings.store, () => Option.isSome(settings.dataDir) ? "pglite" : "memory")
  switch (store) {
    case "memory":
      return Either.right({ _tag: "memory" })
    case "pglite":
      return Either.right({ _tag: "pglite", dataDir: Option.getOrUndefined(settings.dataDir) })
    case "postgres": {
      if (Option.isNone(settings.databaseUrl)) {
        return Either.left(ConfigError.MissingData(
          [variables.databaseUrl],
          `${variables.databaseUrl} is required when ${variables.store} is postgres`
        ))
      }
      const url = settings.databaseUrl.value
      return isPostgresUrl(Redacted.value(url))
        ? Either.right({ _tag: "postgres", url })
        : Either.left(ConfigError.InvalidData(
          [variables.databaseUrl],
          "must be a postgres:// or postgresql:// URL"
        ))
    }
  }
}

const validate = (settings: Raw): Either.Either<Options, ConfigError.ConfigError> => {
  if (summarizing.has(settings.strategy) && settings.summaryTokenCap >= settings.promptTokenBudget) {
    return Either.left(ConfigError.InvalidData(
      [variables.summaryTokenCap],
      `must be below ${variables.promptTokenBudget} (${settings.promptTokenBudget}), got ${settings.summaryTokenCap}`
    ))
  }
  if (settings.lowWater >= settings.highWater || settings.highWater === 0) {
    return Either.left(ConfigError.InvalidData(
      [variables.lowWater],
      `must be below ${variables.highWater} (${settings.highWater}), got ${settings.lowWater}`
    ))
  }
  if (Option.isSome(settings.summaryPromptId) && Option.isNone(settings.openAi)) {
    return Either.left(ConfigError.InvalidData(
      [variables.summaryPromptId],
      `a hosted prompt needs the OpenAI summarizer: set ${variables.openAiApiKey}, or ${variables.openAiBaseUrl}`
    ))
  }
  if (Option.isSome(settings.summarizerModel) && Option.isNone(settings.openAi)) {
    return Either.left(ConfigError.InvalidData(
      [variables.summarizerModel],
      `a summarizer model needs a server to reach it: set ${variables.openAiApiKey}, or ${variables.openAiBaseUrl} ` +
        `for an OpenAI-compatible server (e.g. http://localhost:11434/v1); unset it for the offline summarizer`
    ))
  }
  if (settings.strategy === "hierarchical" && settings.mode === "layered") {
    return Either.left(ConfigError.InvalidData(
      [variables.mode],
      `must be incremental or full with ${variables.strategy}=hierarchical, got layered`
    ))
  }
  if (settings.recallTokenBudget >= 1) {
    return Either.left(ConfigError.InvalidData(
      [variables.recallTokenBudget],
      `must be below 1 (the recent turns keep the rest), got ${settings.recallTokenBudget}`
    ))
  }
  if (settings.recall === "hybrid" && summarizing.has(settings.strategy) && Option.isNone(settings.openAi)) {
    return Either.left(ConfigError.MissingData(
      [variables.recall],
      `${variables.recall}=hybrid needs an embedding model server: set ${variables.openAiApiKey}, or ` +
        `${variables.openAiBaseUrl} for an OpenAI-compatible one (model: ${variables.embeddingModel})`
    ))
  }
  return Either.map(storeOf(settings), (store): Options => ({
    strategy: settings.strategy,
    store,
    summarizer: Option.match(settings.openAi, {
      onNone: (): Summarizer => ({ _tag: "extractive" }),
      onSome: (openAi): Summarizer => ({ _tag: "openai", ...openAi })
    }),
    tokenizer: settings.tokenizer,
    kRawTurns: settings.kRawTurns,
    promptTokenBudget: settings.promptTokenBudget,
    chunkSummarizeThreshold: Option.getOrUndefined(settings.chunkSummarizeThreshold),
    highWater: settings.highWater,
    lowWater: settings.lowWater,
    view: settings.view,
    recall: settings.recall,
    recallTokenBudget: settings.recallTokenBudget,
    ...(settings.recall === "hybrid" && Option.isSome(settings.openAi)
      ? {
        embeddingModel: settings.embeddingModel.trim(),
        embeddings: {
          _tag: "openai",
          apiKey: settings.openAi.value.apiKey,
          apiUrl: settings.openAi.value.apiUrl,
          model: settings.embeddingModel.trim()
        }
      }
      : {}),
    maxMessageLength: settings.maxMessageLength,
    summarizationConcurrency: settings.summarizationConcurrency,
    summaryTokenCap: settings.summaryTokenCap,
    mode: settings.mode
  }))
}

/**
 * The options from the environment (the variables in `variables`, defaults as in DESIGN §6):
 * `MEMORY_STRATEGY`, `MEMORY_STORE` (`memory` by default: no dependency, nothing kept past the
 * process; `pglite` in `MEMORY_DATA_DIR`, the default when that is set, else in memory; `postgres`
 * at `DATABASE_URL`), the strategy's knobs, `MEMORY_TOKENIZER`, and the
 * summarizer: OpenAI (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `MEMORY_SUMMARIZER_MODEL`, and a hosted
 * summary prompt by `PROMPT_ID_SUMMARY_GLOBAL` / `PROMPT_VERSION_SUMMARY_GLOBAL`) when a key or a
 * base URL is set, the extractive skill otherwise (`MEMORY_SUMMARIZER_MODEL` set without either is
 * an error, not a silent offline summarizer). An invalid value fails with a
 * `ConfigError` naming the variable (and the allowed values, for a choice).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = raw.pipe(Config.mapOrFail(validate))
