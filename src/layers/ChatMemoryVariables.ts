/**
 * The environment variables of the composed memory, written once: each with its default, what it
 * means, how it is read (an Effect `Config`, checked by the schema of the setting it sets) and the
 * command line's flag that overrides it. The README's configuration table is this table, and the
 * command line's flags are made from it.
 *
 * @since 0.1.0
 */
import { Config, Option, Redacted, Schema } from "effect"
import * as ContextSettings from "../domain/ContextSettings.js"
import { StrategyName } from "../domain/ConversationSettings.js"
import { MaxContentLength } from "../domain/Message.js"
import * as HierarchicalStrategy from "../strategies/HierarchicalStrategy.js"
import * as SummarizationOptions from "../strategies/SummarizationOptions.js"
import * as Values from "./internal/configValues.js"
import * as OpenAiModels from "./internal/openAiModels.js"
import { MaxMessageLength } from "./internal/service.js"

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
 * The command line's flag for a variable.
 *
 * @since 0.1.0
 * @category models
 */
export interface Flag {
  /** The flag without its dashes: `budget` for `--budget`. */
  readonly name: string
  /** A one-letter alias (`k` for `-k`). */
  readonly alias?: string | undefined
  /** What its value is, as the help names it: `tokens`, `name`, `share`. */
  readonly value: string
  /** What it sets, in a few words; a choice lists its values. */
  readonly help: string
  /** The command line's own default, under the flag and the environment, when it has one. */
  readonly default?: string | undefined
}

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
  /** How it is read: its value (or its default), checked, or a `ConfigError` naming it. */
  readonly config: Config.Config<A>
  /** The command line's flag that overrides it, if any. */
  readonly flag?: Flag | undefined
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

const choices = (literals: ReadonlyArray<string>) => literals.join(" | ")

const choiceOf = <const A extends ReadonlyArray<string>>(
  name: string,
  schema: { readonly literals: A },
  fallback: A[number],
  meaning: string,
  flag?: Omit<Flag, "help" | "value">
): Setting<A[number]> => ({
  name,
  fallback,
  default: code(fallback),
  meaning,
  config: Values.choice(schema, name, fallback),
  flag: flag === undefined ? undefined : { ...flag, value: "name", help: choices(schema.literals) }
})

const numberOf = (
  name: string,
  read: (name: string) => Config.Config<number>,
  fallback: number,
  meaning: string,
  flag?: Flag
): Setting<number> => ({
  name,
  fallback,
  default: String(fallback),
  meaning,
  config: read(name).pipe(Config.withDefault(fallback)),
  flag
})

const integer = (schema: Schema.Schema<number>) => (name: string) => Values.wholeNumber(name, schema)

const share = (schema: Schema.Schema<number>) => (name: string) => Values.share(name, schema)

const context = ContextSettings.defaults

const summarizing = SummarizationOptions.defaults

const storeName = "MEMORY_STORE"

const dataDirName = "MEMORY_DATA_DIR"

/** The command line's own store: PGlite in a data directory, so that its commands see each other's conversations. */
const commandLine = { store: "pglite", dataDir: "./.chat-memory" }

const apiKeyName = "OPENAI_API_KEY"

const baseUrlName = "OPENAI_BASE_URL"

const promptIdName = "PROMPT_ID_SUMMARY_GLOBAL"

/**
 * The variables, by the option they set (DESIGN §6), in the order the documentation lists them.
 *
 * @since 0.1.0
 * @category constants
 */
export const variables = {
  strategy: choiceOf(
    "MEMORY_STRATEGY",
    StrategyName,
    "summarization",
    StrategyName.literals.map(code).join(", "),
    { name: "strategy" }
  ),
  store: {
    name: storeName,
    default: `\`memory\` (\`pglite\` when \`${dataDirName}\` is set; the command line: \`${commandLine.store}\`)`,
    meaning: "`memory` (no dependency, nothing kept past the process), `pglite` (embedded PostgreSQL), `postgres`",
    // Unset: PGlite in MEMORY_DATA_DIR when that is set, else the in-memory store.
    config: Config.option(Config.literal(...StoreName.literals)(storeName)),
    flag: { name: "store", value: "name", help: choices(StoreName.literals), default: commandLine.store }
  },
  dataDir: {
    name: dataDirName,
    default: `(none: PGlite in memory; the command line: \`${commandLine.dataDir}\`)`,
    meaning: "PGlite's data directory, created if missing",
    config: Values.optionalNonBlank(dataDirName),
    flag: { name: "data-dir", value: "path", help: "PGlite data directory", default: commandLine.dataDir }
  },
  databaseUrl: {
    name: "DATABASE_URL",
    default: "—",
    meaning: `\`postgres://…\`, required by \`${storeName}=postgres\`; redacted in logs and errors`,
    config: Config.option(Config.redacted("DATABASE_URL"))
  },
  tokenBudget: numberOf(
    "MEMORY_PROMPT_TOKEN_BUDGET",
    integer(ContextSettings.TokenBudget),
    context.tokenBudget,
    "tokens the context may take, system messages included",
    { name: "budget", value: "tokens", help: "token budget" }
  ),
  kRawTurns: numberOf(
    "MEMORY_K_RAW_TURNS",
    integer(ContextSettings.KRawTurns),
    context.kRawTurns,
    "turns always shown verbatim (1–1000)",
    { name: "k-raw-turns", alias: "k", value: "turns", help: "turns always shown verbatim" }
  ),
  highWater: numberOf(
    "MEMORY_HIGH_WATER",
    share(SummarizationOptions.HighWater),
    summarizing.highWater,
    "with `room` = budget − summary cap − system tokens: a summarization is due when the unsummarized turns " +
      "(more than K) pass this share of `room`",
    { name: "high-water", value: "share", help: "share of the room for turns that triggers a fold" }
  ),
  lowWater: numberOf(
    "MEMORY_LOW_WATER",
    share(SummarizationOptions.LowWater),
    summarizing.lowWater,
    "a summarization folds the oldest turns until at most this share of `room` (and at least K turns) stays " +
      "unsummarized; below `MEMORY_HIGH_WATER`",
    { name: "low-water", value: "share", help: "share of the room left unsummarized by a fold" }
  ),
  chunkSummarizeThreshold: {
    name: "MEMORY_CHUNK_SUMMARIZE_THRESHOLD",
    default: "(unset: the watermarks)",
    meaning: "the explicit trigger instead: summary + buffer tokens past it",
    config: Config.option(
      Values.wholeNumber("MEMORY_CHUNK_SUMMARIZE_THRESHOLD", SummarizationOptions.ChunkSummarizeThreshold)
    ),
    flag: { name: "threshold", value: "tokens", help: "summary + buffer tokens that trigger a summary" }
  },
  view: choiceOf(
    "MEMORY_CONTEXT_VIEW",
    ContextSettings.View,
    context.view,
    "`full`: the newest turns that fit, whether or not the summary covers them; `stable`: every unsummarized " +
      "turn (see below)",
    { name: "view" }
  ),
  recall: choiceOf(
    "MEMORY_RECALL",
    ContextSettings.RecallMode,
    context.recall,
    "recall for a context asked with a query: `lexical` (full-text search, offline), `hybrid` (lexical fused " +
      `with a search by meaning; needs \`${apiKeyName}\` or \`${baseUrlName}\`) or \`off\``,
    { name: "recall" }
  ),
  recallTokenBudget: numberOf(
    "MEMORY_RECALL_TOKEN_BUDGET",
    share(ContextSettings.RecallTokenBudget),
    context.recallTokenBudget,
    "the share of the budget recalled turns may take from the recent turns (below 1; never their newest K)",
    { name: "recall-budget", value: "share", help: "share of the budget recalled turns may take" }
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
    integer(SummarizationOptions.SummaryTokenCap),
    summarizing.summaryTokenCap,
    "hard cap on the summary (below the budget)",
    { name: "cap", value: "tokens", help: "summary token cap" }
  ),
  mode: choiceOf(
    "MEMORY_SUMMARY_MODE",
    SummarizationOptions.SummaryMode,
    summarizing.mode,
    "`incremental` (fold the summary with new turns: each message read once), `full` (re-summarize the " +
      "originals, in chunks within the summarizer's input limit, never a summary of a summary; the hierarchical " +
      "strategy re-extracts facts and narrative the same way), `layered` (one summary per chunk, oldest merged " +
      "past the cap; not with `hierarchical`)",
    { name: "mode" }
  ),
  narrativeFold: choiceOf(
    "MEMORY_NARRATIVE_FOLD",
    HierarchicalStrategy.NarrativeFold,
    HierarchicalStrategy.defaults.narrativeFold,
    "how the hierarchical strategy's `incremental` fold treats the narrative: `append` (read its latest " +
      "lines again, write after the earlier ones, the oldest leaving first but lines with a number outlasting " +
      "the older half's plain ones: each message read about once), " +
      "`rewrite` (read and write the whole narrative at each fold)",
    { name: "narrative-fold" }
  ),
  summarizationConcurrency: numberOf(
    "MEMORY_SUMMARIZATION_CONCURRENCY",
    integer(SummarizationOptions.SummarizationConcurrency),
    summarizing.summarizationConcurrency,
    "conversations one process summarizes at once in the background (1–1000); the others wait for a turn, " +
      "holding no lock or connection"
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
    "`approximate` (chars/4) or `exact` (o200k)",
    { name: "tokenizer" }
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
    ),
    flag: { name: "summarizer-model", value: "model", help: "the summarizer's model" }
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
