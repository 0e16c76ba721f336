/**
 * Reads the composed memory's options from the environment. A variable is read unless its option
 * is given in code, and the values are then checked together.
 */
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import type * as OpenAiSkill from "../../skills/OpenAiSkill.js"
import type * as PgStore from "../../store/PgStore.js"
import { conflict, type Read, storeOf, summarizing } from "./checks.js"
import type { Options, Summarizer } from "./options.js"
import { isHttpUrl, isPostgresUrl } from "./values.js"
import { variables } from "./variables.js"

const { openAiApiKey, openAiBaseUrl, summaryPromptId, summaryPromptVersion } = variables

/**
 * The summarizer's hosted OpenAI prompt, none when neither variable is set. Without a version, the
 * one published on OpenAI is used. A version without an id is an error.
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

const missingServer = () =>
  ConfigError.MissingData(
    [openAiApiKey.name],
    `${openAiApiKey.name} is required unless ${openAiBaseUrl.name} points to a server that needs no key`
  )

/** The summarizer's OpenAI options. A key is required unless a base URL is set. An empty key counts as none. */
export const openAi: Config.Config<OpenAiSkill.OpenAiSkill.Options> = Config.all({
  apiKey: openAiApiKey.config,
  apiUrl: openAiBaseUrl.config,
  model: variables.summarizerModel.config,
  summaryPrompt
}).pipe(
  Config.mapOrFail(({ apiKey, apiUrl, model, summaryPrompt }) =>
    Option.isNone(apiKey) && Option.isNone(apiUrl)
      ? Either.left(missingServer())
      : Either.right({
        apiKey: Option.getOrUndefined(apiKey),
        apiUrl: Option.getOrUndefined(apiUrl),
        model,
        summaryPrompt: Option.getOrUndefined(summaryPrompt)
      })
  )
)

/** The PostgreSQL store's options: `DATABASE_URL` (redacted), a `postgres://` or `postgresql://` URL. */
export const postgres: Config.Config<PgStore.Options> = Config.redacted(variables.databaseUrl.name).pipe(
  Config.validate({
    message: "must be a postgres:// or postgresql:// URL",
    validation: (url) => isPostgresUrl(Redacted.value(url))
  }),
  Config.map((url) => ({ url }))
)

/** A variable read unless the option it sets is given in code. */
const unless = <A>(given: boolean, config: Config.Config<A>): Config.Config<A | undefined> =>
  given ? Config.succeed(undefined) : config

/**
 * The OpenAI server's variables, raw. They are checked only when a summarizer is given in code and
 * hybrid recall needs them for the embedding model.
 */
const serverAsWritten = Config.all({
  apiKey: Config.option(Config.redacted(openAiApiKey.name)),
  apiUrl: Config.option(Config.string(openAiBaseUrl.name))
})

type Written = Config.Config.Success<typeof serverAsWritten>

/** An OpenAI-compatible server: its key, its URL, or both. */
interface Server {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly apiUrl?: string | undefined
}

/** The server the written variables name, checked as `openAi` checks them. */
const serverOf = (written: Written): Either.Either<Server, ConfigError.ConfigError> => {
  const apiKey = Option.filter(written.apiKey, (key) => Redacted.value(key).trim().length > 0)
  if (Option.isSome(written.apiUrl) && !isHttpUrl(written.apiUrl.value)) {
    return Either.left(
      ConfigError.InvalidData([openAiBaseUrl.name], "must be an http(s) URL, e.g. http://localhost:11434/v1")
    )
  }
  if (Option.isNone(apiKey) && Option.isNone(written.apiUrl)) return Either.left(missingServer())
  return Either.right({
    ...(Option.isSome(apiKey) ? { apiKey: apiKey.value } : {}),
    ...(Option.isSome(written.apiUrl) ? { apiUrl: written.apiUrl.value } : {})
  })
}

type Given = { readonly [K in keyof Options<unknown, unknown>]?: unknown }

/** The variables to read given `overrides`: none for an option given in code. */
const readWith = (overrides: Given) => {
  const given = (key: keyof Options<unknown, unknown>) => overrides[key] !== undefined
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
    userFactsTokenBudget: unless(given("userFactsTokenBudget"), variables.userFactsTokenBudget.config),
    digestTokenBudget: unless(given("digestTokenBudget"), variables.digestTokenBudget.config),
    embeddingModel: unless(given("embeddingModel"), variables.embeddingModel.config),
    summaryTokenCap: unless(given("summaryTokenCap"), variables.summaryTokenCap.config),
    mode: unless(given("mode"), variables.mode.config),
    narrativeFold: unless(given("narrativeFold"), variables.narrativeFold.config),
    summarizationConcurrency: unless(given("summarizationConcurrency"), variables.summarizationConcurrency.config),
    maxMessageLength: unless(given("maxMessageLength"), variables.maxMessageLength.config),
    tokenizer: unless(given("tokenizer"), variables.tokenizer.config),
    // A key or a base URL selects the OpenAI skill; with neither, the offline one.
    openAi: unless(summarizer, Config.option(openAi)),
    // With a summarizer in code, the server is read for hybrid recall's embeddings only.
    server: unless(!summarizer || given("embeddings"), serverAsWritten),
    // Read apart so that a hosted prompt without the OpenAI skill is an error, not ignored.
    summaryPromptId: unless(summarizer, Config.option(Config.string(summaryPromptId.name))),
    // Likewise a summarizer model with no server would otherwise silently mean the offline skill.
    summarizerModel: unless(summarizer, Config.option(Config.string(variables.summarizerModel.name)))
  })
}

type Raw = Config.Config.Success<ReturnType<typeof readWith>>

const optional = <A>(value: A | undefined, key: string) => (value === undefined ? {} : { [key]: value })

/** The options from the read values and `overrides`, or a refusal naming a variable. */
const optionsWith =
  <E, R>(overrides: Options<E, R>) => (raw: Raw): Either.Either<Options<E, R>, ConfigError.ConfigError> => {
    const strategy = overrides.strategy ?? raw.strategy ?? variables.strategy.fallback
    const recall = overrides.recall ?? raw.recall ?? variables.recall.fallback
    const wantsEmbeddings = recall === "hybrid" && overrides.embeddings === undefined
    // The embedding model's server comes from the summarizer's variables. With a summarizer in code,
    // the same variables are read for the embeddings alone.
    const server: Either.Either<Option.Option<Server>, ConfigError.ConfigError> = raw.openAi !== undefined
      ? Either.right(raw.openAi)
      : raw.server !== undefined && wantsEmbeddings && summarizing.has(strategy)
      ? Either.map(serverOf(raw.server), Option.some)
      : Either.right(Option.none())
    if (Either.isLeft(server)) return Either.left(server.left)
    const read: Read = { ...raw, openAi: raw.openAi === undefined ? undefined : Option.isSome(raw.openAi) }
    const refused = conflict(read, strategy)
    if (refused !== undefined) return Either.left(refused)
    const store = overrides.store === undefined ? storeOf(read) : Either.right(overrides.store)
    const embeddingModel = overrides.embeddingModel ?? raw.embeddingModel
    const chunkSummarizeThreshold = Option.getOrUndefined(raw.chunkSummarizeThreshold ?? Option.none())
    return Either.map(store, (store): Options<E, R> => ({
      ...overrides,
      // Only the options not given in code were read.
      ...optional(raw.strategy, "strategy"),
      ...optional(raw.tokenizer, "tokenizer"),
      ...optional(raw.tokenBudget, "tokenBudget"),
      ...optional(raw.kRawTurns, "kRawTurns"),
      ...optional(chunkSummarizeThreshold, "chunkSummarizeThreshold"),
      ...optional(raw.highWater, "highWater"),
      ...optional(raw.lowWater, "lowWater"),
      ...optional(raw.view, "view"),
      ...optional(raw.recall, "recall"),
      ...optional(raw.recallTokenBudget, "recallTokenBudget"),
      ...optional(raw.userFactsTokenBudget, "userFactsTokenBudget"),
      ...optional(raw.digestTokenBudget, "digestTokenBudget"),
      ...optional(raw.maxMessageLength, "maxMessageLength"),
      ...optional(raw.summarizationConcurrency, "summarizationConcurrency"),
      ...optional(raw.summaryTokenCap, "summaryTokenCap"),
      ...optional(raw.mode, "mode"),
      ...optional(raw.narrativeFold, "narrativeFold"),
      ...(wantsEmbeddings && embeddingModel !== undefined && Option.isSome(server.right)
        ? {
          embeddingModel,
          embeddings: {
            _tag: "openai",
            apiKey: server.right.value.apiKey,
            apiUrl: server.right.value.apiUrl,
            model: embeddingModel
          }
        }
        : {}),
      summarizer: overrides.summarizer ?? Option.match(raw.openAi ?? Option.none(), {
        onNone: (): Summarizer<E, R> => ({ _tag: "extractive" }),
        onSome: (openAi): Summarizer<E, R> => ({ _tag: "openai", ...openAi })
      }),
      store
    }))
  }

/**
 * The options from the environment with `overrides` given in code. The variables that would set an
 * overridden option are not read.
 */
export const configWith = <E = never, R = never>(overrides: Options<E, R>): Config.Config<Options<E, R>> =>
  readWith(overrides).pipe(Config.mapOrFail(optionsWith(overrides)))

/** The options from the environment alone. */
export const config: Config.Config<Options> = configWith({})
