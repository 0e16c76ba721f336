/**
 * The configuration of the composed memory (`ChatMemoryLive`): the typed options, their defaults,
 * and how they are read from the environment through Effect `Config` (DESIGN §6), by the
 * variables of `ChatMemoryVariables`.
 *
 * @since 0.1.0
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import type { SqlClient } from "@effect/sql"
import { Config, ConfigError, Effect, Either, type Layer, Option, Redacted } from "effect"
import type { StrategyName } from "../domain/ConversationSettings.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import { type Tokenizer, variables } from "./ChatMemoryVariables.js"
import type * as OpenAiEmbeddings from "./embeddings/OpenAiEmbeddings.js"
import { isPostgresUrl } from "./internal/configValues.js"
import type * as Service from "./internal/service.js"
import type * as LanguageModelSkill from "./skills/LanguageModelSkill.js"
import type * as OpenAiSkill from "./skills/OpenAiSkill.js"
import type * as PgliteClient from "./store/PgliteClient.js"
import type * as PgStore from "./store/PgStore.js"
import type * as SqlStore from "./store/SqlStore.js"

/**
 * The embedding model of `hybrid` recall: a model behind the OpenAI API (or any compatible server,
 * by `apiUrl`), or any `@effect/ai` `EmbeddingModel` layer (typed options only). Its vectors are
 * stored under the strategy's `embeddingModel` name, the OpenAI model's by default.
 *
 * @since 0.1.0
 * @category models
 */
export type Embeddings<E = never, R = never> =
  | ({ readonly _tag: "openai" } & OpenAiEmbeddings.OpenAiEmbeddings.Options)
  | {
    readonly _tag: "embedding-model"
    /** The provider's layer; its errors and requirements become the composed memory's. */
    readonly layer: Layer.Layer<EmbeddingModel.EmbeddingModel, E, R>
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
  | ({ readonly _tag: "postgres" } & PgStore.Options)
  | ({
    readonly _tag: "sql"
    /**
     * The app's `SqlClient` layer, PostgreSQL or PGlite (e.g. `PgClient.layer(...)`). Built once
     * per composition as any layer: the app and the memory share its pool when both are built
     * from the same layer value. A failure to build it is a `RepositoryError` (`connect`).
     */
    readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
  } & SqlStore.Options)

/**
 * Who writes the summaries: the offline extractive skill (no model, no key), a model behind the
 * OpenAI API (or any compatible server, by `apiUrl`), any `@effect/ai` `LanguageModel` layer (any
 * provider, with our prompts), or a `SkillService` layer of your own. The last two are for typed
 * options (`ChatMemoryLive.layer`, or the overrides of `ChatMemoryLive.layerConfig`); the
 * environment selects one of the first two.
 *
 * @since 0.1.0
 * @category models
 */
export type Summarizer<E = never, R = never> =
  | { readonly _tag: "extractive" }
  | ({ readonly _tag: "openai" } & OpenAiSkill.OpenAiSkill.Options)
  | ({
    readonly _tag: "language-model"
    /**
     * The provider's layer, e.g. `OpenAiLanguageModel.model("gpt-4o-mini")`, its client provided
     * or not: its errors and requirements become the composed memory's. The model's name recorded
     * with each summary is the one its responses give, unless `model` says otherwise.
     */
    readonly layer: Layer.Layer<LanguageModel.LanguageModel, E, R>
  } & LanguageModelSkill.LanguageModelSkill.Options)
  | {
    readonly _tag: "skill"
    /** A `SkillService` of your own; it may use the memory's `TokenCounter`. */
    readonly layer: Layer.Layer<SkillService, never, TokenCounter>
  }

/**
 * The options of the composed memory: the parts to use, and the knobs of the strategy (those of
 * `HierarchicalStrategy`, a superset of those of `SummarizationStrategy`; the sliding window reads
 * only `tokenBudget`, the no-op strategy none). Everything left out takes its default. `E` and `R`
 * are the errors and requirements of the layers given for the summarizer and the embeddings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never, R = never> extends Partial<HierarchicalOptions>, Service.Options {
  /** `summarization` by default. */
  readonly strategy?: StrategyName | undefined
  /** The in-memory store by default. */
  readonly store?: Store | undefined
  /** The extractive skill by default. */
  readonly summarizer?: Summarizer<E, R> | undefined
  /** `approximate` by default. */
  readonly tokenizer?: Tokenizer | undefined
  /** The embedding model of `recall: "hybrid"`; required by it, unused otherwise. */
  readonly embeddings?: Embeddings<E, R> | undefined
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
 * `postgres://` or `postgresql://` URL. For `PgStore.layerConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const postgres: Config.Config<PgStore.Options> = Config.redacted(variables.databaseUrl.name).pipe(
  Config.validate({
    message: "must be a postgres:// or postgresql:// URL",
    validation: (url) => isPostgresUrl(Redacted.value(url))
  }),
  Config.map((url) => ({ url }))
)

const summarizing = new Set<StrategyName>(["summarization", "hierarchical"])

/** A variable that is read, or `undefined` without reading it when the option is given in code. */
const unless = <A>(given: boolean, config: Config.Config<A>): Config.Config<A | undefined> =>
  given ? Config.succeed(undefined) : config

/** Whether the overrides give the option. */
const gives = (overrides: Options<unknown, unknown>, key: keyof Options<unknown, unknown>): boolean =>
  overrides[key] !== undefined

/**
 * The variables still used once `overrides` are given: none for an option given in code, and, for
 * the OpenAI variables, only when the summarizer or hybrid recall's embeddings (`hybrid`) still
 * come from them.
 */
const rawWith = (overrides: Options<unknown, unknown>, hybrid: boolean) => {
  const given = (key: keyof Options<unknown, unknown>) => gives(overrides, key)
  const store = given("store")
  const summarizer = given("summarizer")
  return Config.all({
    strategy: unless(given("strategy"), variables.strategy.config),
    recall: unless(given("recall"), variables.recall.config),
    store: unless(store, variables.store.config),
    dataDir: unless(store, variables.dataDir.config),
    databaseUrl: unless(store, variables.databaseUrl.config),
    tokenBudget: unless(given("tokenBudget"), variables.tokenBudget.config),
    kRawTurns: unless(given("kRawTurns"), variables.kRawTurns.config),
    highWater: unless(given("highWater"), variables.highWater.config),
    lowWater: unless(given("lowWater"), variables.lowWater.config),
    chunkSummarizeThreshold: unless(given("chunkSummarizeThreshold"), variables.chunkSummarizeThreshold.config),
    view: unless(given("view"), variables.view.config),
    recallTokenBudget: unless(given("recallTokenBudget"), variables.recallTokenBudget.config),
    embeddingModel: unless(!hybrid || given("embeddingModel"), variables.embeddingModel.config),
    summaryTokenCap: unless(given("summaryTokenCap"), variables.summaryTokenCap.config),
    mode: unless(given("mode"), variables.mode.config),
    narrativeFold: unless(given("narrativeFold"), variables.narrativeFold.config),
    summarizationConcurrency: unless(given("summarizationConcurrency"), variables.summarizationConcurrency.config),
    maxMessageLength: unless(given("maxMessageLength"), variables.maxMessageLength.config),
    tokenizer: unless(given("tokenizer"), variables.tokenizer.config),
    // A key or a base URL selects the OpenAI skill; with neither, the offline one.
    openAi: unless(summarizer && !hybrid, Config.option(openAi)),
    // Read apart too: a hosted prompt without the OpenAI skill is an error, not ignored.
    summaryPromptId: unless(summarizer, Config.option(Config.string(summaryPromptId.name))),
    // And a summarizer model: set with nothing to reach it, it would silently mean the offline skill.
    summarizerModel: unless(summarizer, Config.option(Config.string(variables.summarizerModel.name)))
  })
}

type Raw = Config.Config.Success<ReturnType<typeof rawWith>>

const storeOf = (settings: Raw): Either.Either<Store, ConfigError.ConfigError> => {
  const dataDir = settings.dataDir ?? Option.none()
  const store = Option.getOrElse(settings.store ?? Option.none(), () => Option.isSome(dataDir) ? "pglite" : "memory")
  switch (store) {
    case "memory":
      return Either.right({ _tag: "memory" })
    case "pglite":
      return Either.right({ _tag: "pglite", dataDir: Option.getOrUndefined(dataDir) })
    case "postgres": {
      const databaseUrl = variables.databaseUrl.name
      const url = settings.databaseUrl ?? Option.none()
      if (Option.isNone(url)) {
        return Either.left(ConfigError.MissingData(
          [databaseUrl],
          `${databaseUrl} is required when ${variables.store.name} is postgres`
        ))
      }
      return isPostgresUrl(Redacted.value(url.value))
        ? Either.right({ _tag: "postgres", url: url.value })
        : Either.left(ConfigError.InvalidData([databaseUrl], "must be a postgres:// or postgresql:// URL"))
    }
  }
}

/**
 * What the values, each valid alone, say together: a refusal naming the variable at fault. Only
 * values read from the environment are checked here; what the code gives, the layers check (a
 * `DataValidationError` naming the option).
 */
const conflict = (settings: Raw, strategyName: StrategyName): ConfigError.ConfigError | undefined => {
  const { highWater, lowWater, mode, recall, strategy, summarizerModel, summaryTokenCap, tokenBudget } = variables
  const provider = `set ${openAiApiKey.name}, or ${openAiBaseUrl.name}`
  const noOpenAi = settings.openAi !== undefined && Option.isNone(settings.openAi)
  if (
    summarizing.has(strategyName) && settings.summaryTokenCap !== undefined && settings.tokenBudget !== undefined &&
    settings.summaryTokenCap >= settings.tokenBudget
  ) {
    return ConfigError.InvalidData(
      [summaryTokenCap.name],
      `must be below ${tokenBudget.name} (${settings.tokenBudget}), got ${settings.summaryTokenCap}`
    )
  }
  if (settings.lowWater !== undefined && settings.highWater !== undefined && settings.lowWater >= settings.highWater) {
    return ConfigError.InvalidData(
      [lowWater.name],
      `must be below ${highWater.name} (${settings.highWater}), got ${settings.lowWater}`
    )
  }
  if (settings.summaryPromptId !== undefined && Option.isSome(settings.summaryPromptId) && noOpenAi) {
    return ConfigError.InvalidData([summaryPromptId.name], `a hosted prompt needs the OpenAI summarizer: ${provider}`)
  }
  if (settings.summarizerModel !== undefined && Option.isSome(settings.summarizerModel) && noOpenAi) {
    return ConfigError.InvalidData(
      [summarizerModel.name],
      `a summarizer model needs a server to reach it: ${provider} ` +
        `for an OpenAI-compatible server (e.g. http://localhost:11434/v1); unset it for the offline summarizer`
    )
  }
  if (strategyName === "hierarchical" && settings.mode === "layered") {
    return ConfigError.InvalidData(
      [mode.name],
      `must be incremental or full with ${strategy.name}=hierarchical, got layered`
    )
  }
  if (settings.recall === "hybrid" && summarizing.has(strategyName) && noOpenAi && settings.openAi !== undefined) {
    return ConfigError.MissingData(
      [recall.name],
      `${recall.name}=hybrid needs an embedding model server: ${provider} for an OpenAI-compatible one ` +
        `(model: ${variables.embeddingModel.name})`
    )
  }
  return undefined
}

const validateWith =
  <E, R>(overrides: Options<E, R>) => (settings: Raw): Either.Either<Options<E, R>, ConfigError.ConfigError> => {
    const strategy = overrides.strategy ?? settings.strategy ?? variables.strategy.fallback
    const hybrid = (overrides.recall ?? settings.recall) === "hybrid" && overrides.embeddings === undefined
    const refused = conflict(settings, strategy)
    if (refused !== undefined) return Either.left(refused)
    const openAiOptions = settings.openAi === undefined ? Option.none() : settings.openAi
    const store = overrides.store === undefined ? storeOf(settings) : Either.right(overrides.store)
    const embeddingModel = overrides.embeddingModel ?? settings.embeddingModel
    const chunkSummarizeThreshold = Option.getOrUndefined(settings.chunkSummarizeThreshold ?? Option.none())
    return Either.map(store, (store): Options<E, R> => ({
      ...overrides,
      // What the environment sets: only the options not given in code were read.
      ...(settings.strategy === undefined ? {} : { strategy: settings.strategy }),
      ...(settings.tokenizer === undefined ? {} : { tokenizer: settings.tokenizer }),
      ...(settings.tokenBudget === undefined ? {} : { tokenBudget: settings.tokenBudget }),
      ...(settings.kRawTurns === undefined ? {} : { kRawTurns: settings.kRawTurns }),
      ...(chunkSummarizeThreshold === undefined ? {} : { chunkSummarizeThreshold }),
      ...(settings.highWater === undefined ? {} : { highWater: settings.highWater }),
      ...(settings.lowWater === undefined ? {} : { lowWater: settings.lowWater }),
      ...(settings.view === undefined ? {} : { view: settings.view }),
      ...(settings.recall === undefined ? {} : { recall: settings.recall }),
      ...(settings.recallTokenBudget === undefined ? {} : { recallTokenBudget: settings.recallTokenBudget }),
      ...(settings.maxMessageLength === undefined ? {} : { maxMessageLength: settings.maxMessageLength }),
      ...(settings.summarizationConcurrency === undefined
        ? {}
        : { summarizationConcurrency: settings.summarizationConcurrency }),
      ...(settings.summaryTokenCap === undefined ? {} : { summaryTokenCap: settings.summaryTokenCap }),
      ...(settings.mode === undefined ? {} : { mode: settings.mode }),
      ...(settings.narrativeFold === undefined ? {} : { narrativeFold: settings.narrativeFold }),
      ...(hybrid && embeddingModel !== undefined && Option.isSome(openAiOptions)
        ? {
          embeddingModel,
          embeddings: {
            _tag: "openai",
            apiKey: openAiOptions.value.apiKey,
            apiUrl: openAiOptions.value.apiUrl,
            model: embeddingModel
          }
        }
        : {}),
      summarizer: overrides.summarizer ?? Option.match(openAiOptions, {
        onNone: (): Summarizer<E, R> => ({ _tag: "extractive" }),
        onSome: (openAi): Summarizer<E, R> => ({ _tag: "openai", ...openAi })
      }),
      store
    }))
  }

/**
 * The options from the environment with `overrides` given in code: each option given is taken as
 * it is, and the variables that would set it are not read (nor checked). `store` spares
 * `MEMORY_STORE`, `MEMORY_DATA_DIR` and `DATABASE_URL`; `summarizer` the OpenAI variables (unless
 * hybrid recall still takes its embeddings from them; `embeddings` spares those too); a knob
 * (`tokenBudget`, `kRawTurns`…) its variable. The other variables are read as by `config`, and an
 * invalid one fails with a `ConfigError` naming it.
 *
 * @since 0.1.0
 * @category config
 */
export const configWith = <E = never, R = never>(
  overrides: Options<E, R>
): Effect.Effect<Options<E, R>, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const given = (key: keyof Options<unknown, unknown>) => gives(overrides, key)
    // Which strategy and recall decide whether hybrid recall's embeddings come from the OpenAI variables.
    const strategy = overrides.strategy ??
      (yield* unless(given("strategy"), variables.strategy.config)) ?? variables.strategy.fallback
    const recall = overrides.recall ?? (yield* unless(given("recall"), variables.recall.config)) ??
      variables.recall.fallback
    const hybrid = recall === "hybrid" && summarizing.has(strategy) && !given("embeddings")
    const settings = yield* rawWith(overrides, hybrid)
    return yield* Either.match(validateWith(overrides)(settings), { onLeft: Effect.fail, onRight: Effect.succeed })
  })

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
export const config: Config.Config<Options> = rawWith({}, true).pipe(Config.mapOrFail(validateWith({})))
