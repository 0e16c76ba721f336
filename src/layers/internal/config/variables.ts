/**
 * The composed memory's environment variables, each with its default, its meaning and its `Config`.
 * The setting's schema checks each value. The README's configuration table is this table, and the
 * command line's flags name its entries.
 */
import { Config, Option, Redacted, Schema } from "effect"
import * as ContextSettings from "../../../domain/ContextSettings.js"
import { StrategyName } from "../../../domain/ConversationSettings.js"
import { MaxContentLength } from "../../../domain/internal/messageLimits.js"
import * as HierarchicalStrategy from "../../../strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../../../strategies/SummarizationStrategy.js"
import * as OpenAiModels from "../openAiModels.js"
import { MaxMessageLength } from "../service.js"
import * as Values from "./values.js"

/**
 * The stores the environment can choose: in memory, embedded PGlite, or a PostgreSQL server.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StoreName = Schema.Literal("memory", "pglite", "postgres")

/**
 * The token counters: `approximate` (characters / 4) or `exact` (OpenAI's o200k encoding).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Tokenizer = Schema.Literal("approximate", "exact")

/**
 * @since 0.1.0
 * @category models
 */
export type Tokenizer = typeof Tokenizer.Type

/**
 * One environment variable.
 *
 * @since 0.1.0
 * @category models
 */
export interface Variable<A> {
  /** The variable's name. */
  readonly name: string
  /** Its default, as the documentation shows it. */
  readonly default: string
  /** What it sets, as the documentation says it. */
  readonly meaning: string
  /** How it is read: its checked value or default, or a `ConfigError` naming it. */
  readonly config: Config.Config<A>
}

/**
 * A variable with a default value (`fallback`), used when it is unset.
 *
 * @since 0.1.0
 * @category models
 */
export interface Setting<A> extends Variable<A> {
  readonly fallback: A
}

const code = (value: string | number) => `\`${value}\``

const choiceOf = <const A extends ReadonlyArray<string>>(
  name: string,
  schema: { readonly literals: A },
  fallback: A[number],
  meaning: string
): Setting<A[number]> => ({
  name,
  fallback,
  default: code(fallback),
  meaning,
  config: Values.choice(schema, name, fallback)
})

const numberOf = (
  name: string,
  read: (name: string) => Config.Config<number>,
  fallback: number,
  meaning: string
): Setting<number> => ({
  name,
  fallback,
  default: String(fallback),
  meaning,
  config: read(name).pipe(Config.withDefault(fallback))
})

const integer = (schema: Schema.Schema<number>) => (name: string) => Values.wholeNumber(name, schema)

const share = (schema: Schema.Schema<number>) => (name: string) => Values.share(name, schema)

const context = ContextSettings.defaults

const summarizing = SummarizationStrategy.defaults

/** Each option's schema, shared by the call and the configuration. */
const knob = SummarizationStrategy.Options.from.fields

const storeName = "MEMORY_STORE"

const dataDirName = "MEMORY_DATA_DIR"

const apiKeyName = "OPENAI_API_KEY"

const baseUrlName = "OPENAI_BASE_URL"

const promptIdName = "PROMPT_ID_SUMMARY_GLOBAL"

/**
 * The variables, keyed by the option they set, in documentation order.
 *
 * @since 0.1.0
 * @category constants
 */
export const variables = {
  strategy: choiceOf(
    "MEMORY_STRATEGY",
    StrategyName,
    "summarization",
    StrategyName.literals.map(code).join(", ")
  ),
  store: {
    name: storeName,
    default: `\`memory\` (\`pglite\` when \`${dataDirName}\` is set)`,
    meaning: "`memory` (no dependency, nothing kept past the process), `pglite` (embedded PostgreSQL), `postgres`",
    // Unset: PGlite in MEMORY_DATA_DIR when that is set, else the in-memory store.
    config: Config.option(Config.literal(...StoreName.literals)(storeName))
  },
  dataDir: {
    name: dataDirName,
    default: "(none: PGlite in memory)",
    meaning: "PGlite's data directory, created if missing",
    config: Values.optionalNonBlank(dataDirName)
  },
  databaseUrl: {
    name: "DATABASE_URL",
    default: "—",
    meaning: `\`postgres://…\`, required by \`${storeName}=postgres\`; redacted in logs and errors`,
    config: Config.option(Config.redacted("DATABASE_URL"))
  },
  tokenBudget: numberOf(
    "MEMORY_PROMPT_TOKEN_BUDGET",
    integer(knob.tokenBudget),
    context.tokenBudget,
    "tokens the context may take, system messages included"
  ),
  kRawTurns: numberOf(
    "MEMORY_K_RAW_TURNS",
    integer(knob.kRawTurns),
    context.kRawTurns,
    "turns always shown verbatim (1–1000)"
  ),
  highWater: numberOf(
    "MEMORY_HIGH_WATER",
    share(knob.highWater),
    summarizing.highWater,
    "with `room` = budget − summary cap − system tokens: a summarization is due when the unsummarized turns " +
      "(more than K) pass this share of `room`"
  ),
  lowWater: numberOf(
    "MEMORY_LOW_WATER",
    share(knob.lowWater),
    summarizing.lowWater,
    "a summarization folds the oldest turns until at most this share of `room` (and at least K turns) stays " +
      "unsummarized; below `MEMORY_HIGH_WATER`"
  ),
  chunkSummarizeThreshold: {
    name: "MEMORY_CHUNK_SUMMARIZE_THRESHOLD",
    default: "(unset: the watermarks)",
    meaning: "the explicit trigger instead: summary + buffer tokens past it",
    config: Config.option(
      Values.wholeNumber("MEMORY_CHUNK_SUMMARIZE_THRESHOLD", knob.chunkSummarizeThreshold.from)
    )
  },
  view: choiceOf(
    "MEMORY_CONTEXT_VIEW",
    ContextSettings.ContextSettings.fields.view,
    context.view,
    "`full`: the newest turns that fit, whether or not the summary covers them; `stable`: every unsummarized " +
      "turn (see below)"
  ),
  recall: choiceOf(
    "MEMORY_RECALL",
    ContextSettings.ContextSettings.fields.recall,
    context.recall,
    "recall for a context asked with a query: `lexical` (full-text search, offline), `hybrid` (lexical fused " +
      `with a search by meaning; needs \`${apiKeyName}\` or \`${baseUrlName}\`) or \`off\``
  ),
  recallTokenBudget: numberOf(
    "MEMORY_RECALL_TOKEN_BUDGET",
    share(knob.recallTokenBudget),
    context.recallTokenBudget,
    "the share of the budget recalled turns may take from the recent turns (below 1; never their newest K)"
  ),
  userFactsTokenBudget: numberOf(
    "MEMORY_USER_FACTS_TOKEN_BUDGET",
    share(knob.userFactsTokenBudget),
    context.userFactsTokenBudget,
    "the share of the budget what is known about the conversation's user may take (a new conversation: what " +
      "the rest leaves)"
  ),
  digestTokenBudget: numberOf(
    "MEMORY_DIGEST_TOKEN_BUDGET",
    share(knob.digestTokenBudget),
    context.digestTokenBudget,
    "the share of the budget the list of the user's recent conversations may take"
  ),
  embeddingModel: {
    name: "MEMORY_EMBEDDING_MODEL",
    default: code(OpenAiModels.embeddings),
    meaning: `the embedding model of \`hybrid\` recall (any OpenAI-compatible server by \`${baseUrlName}\`); ` +
      "its vectors are stored under this name",
    config: Config.string("MEMORY_EMBEDDING_MODEL").pipe(
      Config.validate({ message: "must not be blank", validation: (model) => model.trim().length > 0 }),
      Config.map((model) => model.trim()),
      Config.withDefault(OpenAiModels.embeddings)
    )
  },
  summaryTokenCap: numberOf(
    "MEMORY_SUMMARY_TOKEN_CAP",
    integer(knob.summaryTokenCap),
    summarizing.summaryTokenCap,
    "hard cap on the summary (below the budget)"
  ),
  mode: choiceOf(
    "MEMORY_SUMMARY_MODE",
    knob.mode,
    summarizing.mode,
    "`incremental` (fold the summary with new turns: each message read once), `full` (re-summarize the " +
      "originals, in chunks within the summarizer's input limit, never a summary of a summary; the hierarchical " +
      "strategy re-extracts facts and narrative the same way), `layered` (one summary per chunk, oldest merged " +
      "past the cap; not with `hierarchical`)"
  ),
  narrativeFold: choiceOf(
    "MEMORY_NARRATIVE_FOLD",
    HierarchicalStrategy.NarrativeFold,
    HierarchicalStrategy.defaults.narrativeFold,
    "how the hierarchical strategy's `incremental` fold treats the narrative: `append` (read its latest " +
      "lines again, write after the earlier ones, the oldest leaving first but lines with a number outlasting " +
      "the older half's plain ones: each message read about once), " +
      "`rewrite` (read and write the whole narrative at each fold)"
  ),
  summarizationConcurrency: numberOf(
    "MEMORY_SUMMARIZATION_CONCURRENCY",
    integer(knob.summarizationConcurrency),
    summarizing.summarizationConcurrency,
    "conversations one process summarizes at once in the background (1–1000), and as many for each other " +
      "background job (what is learned about users, embeddings); the others wait for a turn, holding no lock or " +
      "connection"
  ),
  maxMessageLength: numberOf(
    "MEMORY_MAX_MESSAGE_LENGTH",
    integer(MaxMessageLength),
    MaxContentLength,
    "the longest message content `addMessages` accepts (characters)"
  ),
  tokenizer: choiceOf(
    "MEMORY_TOKENIZER",
    Tokenizer,
    "approximate",
    "`approximate` (chars/4) or `exact` (o200k)"
  ),
  summarizerModel: {
    name: "MEMORY_SUMMARIZER_MODEL",
    default: code(OpenAiModels.summarizer),
    meaning: `the cheap model for summaries; set without \`${apiKeyName}\` or \`${baseUrlName}\`, an error (it ` +
      "would otherwise silently mean the offline summarizer)",
    config: Config.string("MEMORY_SUMMARIZER_MODEL").pipe(
      Config.validate({ message: "must not be empty", validation: (model) => model.trim().length > 0 }),
      Config.map((model) => model.trim()),
      Config.withDefault(OpenAiModels.summarizer)
    )
  },
  summaryPromptId: {
    name: promptIdName,
    default: "—",
    meaning: "a prompt hosted on OpenAI for the summaries (Responses API `prompt`), e.g. `pmpt_abc123`: replaces " +
      "our summary prompt (see below); needs the OpenAI summarizer",
    config: Values.promptWord(promptIdName, "a prompt id such as pmpt_abc123")
  },
  summaryPromptVersion: {
    name: "PROMPT_VERSION_SUMMARY_GLOBAL",
    default: "(the published version)",
    meaning: `the hosted prompt's version, e.g. \`2\`; requires \`${promptIdName}\``,
    config: Values.promptWord("PROMPT_VERSION_SUMMARY_GLOBAL", "a prompt version such as 2")
  },
  openAiApiKey: {
    name: apiKeyName,
    default: "—",
    meaning: "with a key or a base URL the summarizer is the model; with neither, the offline extractive skill",
    // An empty key counts as none.
    config: Config.option(Config.redacted(apiKeyName)).pipe(
      Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
    )
  },
  openAiBaseUrl: {
    name: baseUrlName,
    default: "—",
    meaning: "any OpenAI-compatible server, e.g. `http://localhost:11434/v1`",
    config: Config.option(
      Config.string(baseUrlName).pipe(
        Config.validate({
          message: "must be an http(s) URL, e.g. http://localhost:11434/v1",
          validation: Values.isHttpUrl
        })
      )
    )
  }
} satisfies Record<string, Variable<unknown>>
