/**
 * The configuration of the composed memory (`ChatMemoryLive`): the typed options, their defaults,
 * and how they are read from the environment through Effect `Config` (DESIGN §6), by the
 * variables of `ChatMemoryVariables`.
 *
 * @since 0.1.0
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import type { SqlClient } from "@effect/sql"
import { Config, ConfigError, Either, type Layer, Option, Redacted } from "effect"
import type { StrategyName } from "../domain/ConversationSettings.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import { type Tokenizer, variables } from "./ChatMemoryVariables.js"
import type * as OpenAiEmbeddings from "./embeddings/OpenAiEmbeddings.js"
import { isPostgresUrl } from "./internal/configValues.js"
import type * as Memory from "./internal/memory.js"
import type * as LanguageModelSkill from "./skills/LanguageModelSkill.js"
import type * as OpenAiSkill from "./skills/OpenAiSkill.js"
import type * as PgliteClient from "./store/PgliteClient.js"
import type * as PgRepository from "./store/PgRepository.js"
import type * as SqlRepository from "./store/SqlRepository.js"

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
 * only `tokenBudget`, the no-op strategy none). Everything left out takes its default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Partial<HierarchicalOptions>, Memory.Options {
  /** `summarization` by default. */
  readonly strategy?: StrategyName | undefined
  /** The in-memory store by default. */
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
  readonly strategy: StrategyName
  readonly store: Store
  readonly summarizer: Summarizer
  readonly tokenizer: Tokenizer
} = {
  strategy: variables.strategy.fallback,
  store: { _tag: "memory" },
  summarizer: { _tag: "extractive" },
  tokenizer: variables.tokenizer.fallback
}

const { openAiApiKey, openAiBaseUrl, summaryPromptId, summaryPromptVersion } = variables

/**
 * The hosted OpenAI prompt of the summarizer, from `PROMPT_ID_SUMMARY_GLOBAL` and
 * `PROMPT_VERSION_SUMMARY_GLOBAL` (DESIGN §6): none when neither is set. The version is optional
 * (unset: the version published on OpenAI); a version without an id is an error.
 *
 * @since 0.1.0
 * @category config
 */
export const summaryPrompt: Config.Config<Option.Option<OpenAiSkill.OpenAiSkill.HostedPrompt>> = Config.all({
  id: summaryPromptId.config,
  version: summaryPromptVersion.config
}).pipe(
  Config.mapOrFail(({ id, version }) =>
    Option.isNone(id)
      ? Option.isNone(version)
        ? Either.right(Option.none())
        : Either.left(ConfigError.InvalidData(
          [summaryPromptId.name],
          `is required when ${summaryPromptVersion.name} is set`
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
  apiKey: openAiApiKey.config,
  apiUrl: openAiBaseUrl.config,
  model: variables.summarizerModel.config,
  summaryPrompt
}).pipe(
  Config.mapOrFail(({ apiKey, apiUrl, model, summaryPrompt }) =>
    Option.isNone(apiKey) && Option.isNone(apiUrl)
      ? Either.left(
        ConfigError.MissingData(
          [openAiApiKey.name],
          `${openAiApiKey.name} is required unless ${openAiBaseUrl.name} points to a server that needs no key`
        )
      )
      : Either.right({
        apiKey: Option.getOrUndefined(apiKey),
        apiUrl: Option.getOrUndefined(apiUrl),
        model,
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
export const postgres: Config.Config<PgRepository.Options> = Config.redacted(variables.databaseUrl.name).pipe(
  Config.validate({
    message: "must be a postgres:// or postgresql:// URL",
    validation: (url) => isPostgresUrl(Redacted.value(url))
  }),
  Config.map((url) => ({ url }))
)

const summarizing = new Set<StrategyName>(["summarization", "hierarchical"])

const raw = Config.all({
  strategy: variables.strategy.config,
  store: variables.store.config,
  dataDir: variables.dataDir.config,
  databaseUrl: variables.databaseUrl.config,
  tokenBudget: variables.tokenBudget.config,
  kRawTurns: variables.kRawTurns.config,
  highWater: variables.highWater.config,
  lowWater: variables.lowWater.config,
  chunkSummarizeThreshold: variables.chunkSummarizeThreshold.config,
  view: variables.view.config,
  recall: variables.recall.config,
  recallTokenBudget: variables.recallTokenBudget.config,
  embeddingModel: variables.embeddingModel.config,
  summaryTokenCap: variables.summaryTokenCap.config,
  mode: variables.mode.config,
  summarizationConcurrency: variables.summarizationConcurrency.config,
  maxMessageLength: variables.maxMessageLength.config,
  tokenizer: variables.tokenizer.config,
  // A key or a base URL selects the OpenAI skill; with neither, the offline one.
  openAi: Config.option(openAi),
  // Read apart too: a hosted prompt without the OpenAI skill is an error, not ignored.
  summaryPromptId: Config.option(Config.string(summaryPromptId.name)),
  // And a summarizer model: set with nothing to reach it, it would silently mean the offline skill.
  summarizerModel: Config.option(Config.string(variables.summarizerModel.name))
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
      const databaseUrl = variables.databaseUrl.name
      if (Option.isNone(settings.databaseUrl)) {
        return Either.left(ConfigError.MissingData(
          [databaseUrl],
          `${databaseUrl} is required when ${variables.store.name} is postgres`
        ))
      }
      const url = settings.databaseUrl.value
      return isPostgresUrl(Redacted.value(url))
        ? Either.right({ _tag: "postgres", url })
        : Either.left(ConfigError.InvalidData([databaseUrl], "must be a postgres:// or postgresql:// URL"))
    }
  }
}

/** What the values, each valid alone, say together: a refusal naming the variable at fault. */
const conflict = (settings: Raw): ConfigError.ConfigError | undefined => {
  const { highWater, lowWater, mode, recall, strategy, summarizerModel, summaryTokenCap, tokenBudget } = variables
  const provider = `set ${openAiApiKey.name}, or ${openAiBaseUrl.name}`
  if (summarizing.has(settings.strategy) && settings.summaryTokenCap >= settings.tokenBudget) {
    return ConfigError.InvalidData(
      [summaryTokenCap.name],
      `must be below ${tokenBudget.name} (${settings.tokenBudget}), got ${settings.summaryTokenCap}`
    )
  }
  if (settings.lowWater >= settings.highWater) {
    return ConfigError.InvalidData(
      [lowWater.name],
      `must be below ${highWater.name} (${settings.highWater}), got ${settings.lowWater}`
    )
  }
  if (Option.isSome(settings.summaryPromptId) && Option.isNone(settings.openAi)) {
    return ConfigError.InvalidData([summaryPromptId.name], `a hosted prompt needs the OpenAI summarizer: ${provider}`)
  }
  if (Option.isSome(settings.summarizerModel) && Option.isNone(settings.openAi)) {
    return ConfigError.InvalidData(
      [summarizerModel.name],
      `a summarizer model needs a server to reach it: ${provider} ` +
        `for an OpenAI-compatible server (e.g. http://localhost:11434/v1); unset it for the offline summarizer`
    )
  }
  if (settings.strategy === "hierarchical" && settings.mode === "layered") {
    return ConfigError.InvalidData(
      [mode.name],
      `must be incremental or full with ${strategy.name}=hierarchical, got layered`
    )
  }
  if (settings.recall === "hybrid" && summarizing.has(settings.strategy) && Option.isNone(settings.openAi)) {
    return ConfigError.MissingData(
      [recall.name],
      `${recall.name}=hybrid needs an embedding model server: ${provider} for an OpenAI-compatible one ` +
        `(model: ${variables.embeddingModel.name})`
    )
  }
  return undefined
}

const validate = (settings: Raw): Either.Either<Options, ConfigError.ConfigError> => {
  const refused = conflict(settings)
  if (refused !== undefined) return Either.left(refused)
  return Either.map(storeOf(settings), (store): Options => ({
    strategy: settings.strategy,
    store,
    summarizer: Option.match(settings.openAi, {
      onNone: (): Summarizer => ({ _tag: "extractive" }),
      onSome: (openAi): Summarizer => ({ _tag: "openai", ...openAi })
    }),
    tokenizer: settings.tokenizer,
    tokenBudget: settings.tokenBudget,
    kRawTurns: settings.kRawTurns,
    chunkSummarizeThreshold: Option.getOrUndefined(settings.chunkSummarizeThreshold),
    highWater: settings.highWater,
    lowWater: settings.lowWater,
    view: settings.view,
    recall: settings.recall,
    recallTokenBudget: settings.recallTokenBudget,
    ...(settings.recall === "hybrid" && Option.isSome(settings.openAi)
      ? {
        embeddingModel: settings.embeddingModel,
        embeddings: {
          _tag: "openai",
          apiKey: settings.openAi.value.apiKey,
          apiUrl: settings.openAi.value.apiUrl,
          model: settings.embeddingModel
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
 * The options from the environment (`ChatMemoryVariables.variables`, defaults as in DESIGN §6):
 * `MEMORY_STRATEGY`, `MEMORY_STORE` (`memory` by default: no dependency, nothing kept past the
 * process; `pglite` in `MEMORY_DATA_DIR`, the default when that is set, else in memory; `postgres`
 * at `DATABASE_URL`), the strategy's settings, `MEMORY_TOKENIZER`, and the
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
