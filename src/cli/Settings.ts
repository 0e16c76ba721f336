/**
 * The command line's memory settings: flags over the environment variables of
 * `ChatMemoryConfig.variables`, the options they resolve to, and how to describe them.
 */
import { Options } from "@effect/cli"
import { Config, ConfigProvider, Effect, Option, Schema } from "effect"
import * as ContextSettings from "../domain/ContextSettings.js"
import { ConversationSettings, StrategyName } from "../domain/ConversationSettings.js"
import * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as HierarchicalStrategy from "../strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../strategies/SummarizationStrategy.js"

/** The environment variables, by the option each sets. */
export const { variables } = ChatMemoryConfig

/** The command line's flag for a variable. */
interface Flag {
  /** The flag without its dashes: `budget` for `--budget`. */
  readonly name: string
  /** A one-letter alias (`k` for `-k`). */
  readonly alias?: string | undefined
  /** What its value is, as the help names it: `tokens`, `name`, `share`. */
  readonly value: string
  /** What it sets, in a few words. A choice lists its values. */
  readonly help: string
  /** The command line's own default, under the flag and the environment, when it has one. */
  readonly default?: string | undefined
}

/** A flag whose value is one of `literals`. */
const choice = (name: string, literals: ReadonlyArray<string>, fallback?: string): Flag => ({
  name,
  value: "name",
  help: literals.join(" | "),
  default: fallback
})

/**
 * The command line's own store: PGlite in a data directory, so its commands see each other's
 * conversations. The library's default store is in memory.
 */
const commandLine = { store: "pglite", dataDir: "./.chat-memory" }

/** The flag of each variable that has one. */
const flagOfVariable: { readonly [K in keyof typeof variables]?: Flag } = {
  strategy: choice("strategy", StrategyName.literals),
  store: choice("store", ["memory", "pglite", "postgres"], commandLine.store),
  dataDir: { name: "data-dir", value: "path", help: "PGlite data directory", default: commandLine.dataDir },
  tokenBudget: { name: "budget", value: "tokens", help: "token budget" },
  kRawTurns: { name: "k-raw-turns", alias: "k", value: "turns", help: "turns always shown verbatim" },
  highWater: { name: "high-water", value: "share", help: "share of the room for turns that triggers a fold" },
  lowWater: { name: "low-water", value: "share", help: "share of the room left unsummarized by a fold" },
  chunkSummarizeThreshold: {
    name: "threshold",
    value: "tokens",
    help: "summary + buffer tokens that trigger a summary"
  },
  view: choice("view", ContextSettings.ContextSettings.fields.view.literals),
  recall: choice("recall", ContextSettings.ContextSettings.fields.recall.literals),
  recallTokenBudget: { name: "recall-budget", value: "share", help: "share of the budget recalled turns may take" },
  summaryTokenCap: { name: "cap", value: "tokens", help: "summary token cap" },
  mode: choice("mode", SummarizationStrategy.Options.from.fields.mode.literals),
  narrativeFold: choice("narrative-fold", HierarchicalStrategy.NarrativeFold.literals),
  tokenizer: choice("tokenizer", ["approximate", "exact"]),
  summarizerModel: { name: "summarizer-model", value: "model", help: "the summarizer's model" }
}

const flagsByKey = new Map<string, Flag>(Object.entries(flagOfVariable))

/** The variables a flag overrides, keyed by the option they set, in the table's order. */
const flagged = Object.entries(variables).flatMap(([key, variable]) => {
  const flag = flagsByKey.get(key)
  return flag === undefined ? [] : [{ key, name: variable.name, flag }]
})

/** A flag's help: what it sets, the variable it overrides and the command line's default. */
const help = (entry: typeof flagged[number], note?: string) =>
  `${entry.flag.help} (${entry.name}${entry.flag.default === undefined ? "" : `; default ${entry.flag.default}`}${
    note === undefined ? "" : `; ${note}`
  })`

const flag = (entry: typeof flagged[number], note?: string) => {
  const text = Options.text(entry.flag.name).pipe(
    Options.withPseudoName(entry.flag.value),
    Options.withDescription(help(entry, note)),
    Options.optional
  )
  return entry.flag.alias === undefined ? text : text.pipe(Options.withAlias(entry.flag.alias))
}

/**
 * The flags, each overriding one variable, keyed by the option it sets. Values are checked by the
 * configuration itself, so a bad flag and a bad variable fail alike, naming both.
 */
export const flags: Readonly<Record<string, Options.Options<Option.Option<string>>>> = Object.fromEntries(
  flagged.map((entry) => [entry.key, flag(entry)])
)

/**
 * The flags of a command that reads a stored conversation. `--strategy` defaults to the strategy
 * recorded in its settings.
 */
export const readingFlags: Readonly<Record<string, Options.Options<Option.Option<string>>>> = Object.fromEntries(
  flagged.map((entry) => [
    entry.key,
    entry.key === "strategy" ? flag(entry, "default: the one that wrote the conversation") : flag(entry)
  ])
)

/** The parsed flags, by the option each sets. */
export type Flags = Readonly<Record<string, Option.Option<string>>>

/**
 * The command line's own defaults, under the flags and the environment. The store is PGlite in
 * `./.chat-memory`, so `replay`, `context`, `inspect` and `chat` see each other's conversations.
 */
const cliDefaults = new Map(
  flagged.flatMap((
    { flag, name }
  ): Array<[string, string]> => (flag.default === undefined ? [] : [[name, flag.default]]))
)

/** The flag that sets a variable, if any, as typed. */
export const flagOf = (variable: string): string | undefined => {
  const entry = flagged.find(({ name }) => name === variable)
  return entry === undefined ? undefined : `--${entry.flag.name}`
}

/**
 * The flags over `environment`, over the command line's own defaults. `environment` is the
 * process's variables, or what a test gives.
 */
const provider = (given: Flags, environment: ConfigProvider.ConfigProvider): ConfigProvider.ConfigProvider => {
  const map = new Map<string, string>()
  for (const { key, name } of flagged) {
    const value = given[key]
    if (value !== undefined && Option.isSome(value)) map.set(name, value.value)
  }
  return ConfigProvider.fromMap(map).pipe(
    ConfigProvider.orElse(() => environment),
    ConfigProvider.orElse(() => ConfigProvider.fromMap(cliDefaults))
  )
}

/** Runs `effect` with the flags laid over the current configuration, the environment. */
export const withFlags = (given: Flags) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.configProviderWith((environment) => Effect.withConfigProvider(effect, provider(given, environment)))

/** The memory's options from the flags and the environment. */
export const resolve = (given: Flags) => withFlags(given)(ChatMemoryConfig.config)

/** Whether the flags or the environment name a strategy, rather than leaving the default. */
export const strategyNamed = (given: Flags) =>
  withFlags(given)(Effect.map(Config.option(Config.string(variables.strategy.name)), Option.isSome))

/** Whether the store outlives the process, so that a later command sees what this one wrote. */
export const isPersistent = (store: ChatMemoryConfig.Store | undefined): boolean =>
  store?._tag === "postgres" || (store?._tag === "pglite" && store.dataDir !== undefined)

/** What the options chose, in words and figures. */
export const describe = (options: ChatMemoryConfig.Options) => {
  const store = options.store ?? ChatMemoryConfig.defaults.store
  const summarizer = options.summarizer ?? ChatMemoryConfig.defaults.summarizer
  const strategy = options.strategy ?? ChatMemoryConfig.defaults.strategy
  return {
    strategy,
    store: store._tag,
    dataDir: store._tag === "pglite" ? store.dataDir ?? null : null,
    persistent: isPersistent(store),
    summarizer: summarizer._tag,
    summarizerModel: summarizer._tag === "openai" || summarizer._tag === "language-model" ? summarizer.model : null,
    summarizerUrl: summarizer._tag === "openai" ? summarizer.apiUrl ?? null : null,
    tokenizer: options.tokenizer ?? ChatMemoryConfig.defaults.tokenizer,
    tokenBudget: strategy === "noop" ? null : options.tokenBudget ?? null,
    kRawTurns: options.kRawTurns ?? null,
    chunkSummarizeThreshold: options.chunkSummarizeThreshold ?? null,
    highWater: options.highWater ?? null,
    lowWater: options.lowWater ?? null,
    view: options.view ?? null,
    summaryTokenCap: options.summaryTokenCap ?? null,
    mode: options.mode ?? null,
    recall: options.recall ?? null,
    recallTokenBudget: options.recallTokenBudget ?? null
  }
}

/** How a setting is named where it is set: its flag, or its variable when it has none. */
export const optionName = (variable: { readonly name: string }): string => flagOf(variable.name) ?? variable.name

/** A share as a percentage: `0.9` as `90 %`. */
const percent = (share: number | null) => `${Math.round((share ?? 0) * 100)} %`

/**
 * What the options chose, in plain words, one row a setting: what it does, then its value and the
 * option that sets it. For example `["recent turns always shown", "3 (--k-raw-turns)"]`. A setting
 * the strategy does not use is left out.
 */
export const rows = (options: ChatMemoryConfig.Options): Array<readonly [string, string]> => {
  const d = describe(options)
  const name = (key: keyof typeof variables) => optionName(variables[key])
  const summarizes = d.strategy === "summarization" || d.strategy === "hierarchical"
  const store = d.store === "pglite"
    ? d.dataDir === null
      ? `PGlite in memory, gone when the command ends (${name("store")}, ${name("dataDir")})`
      : `PGlite at ${d.dataDir} (${name("dataDir")})`
    : d.store === "memory"
    ? `in memory, gone when the command ends (${name("store")} memory)`
    : `PostgreSQL at ${variables.databaseUrl.name} (${name("store")} postgres)`
  const summarizer = d.summarizer === "openai"
    ? `${d.summarizerModel} at ${d.summarizerUrl ?? "api.openai.com"} (${name("summarizerModel")}, ` +
      `${variables.openAiBaseUrl.name})`
    : d.summarizer === "extractive"
    ? `extractive, offline: no model (${variables.openAiApiKey.name} or ${variables.openAiBaseUrl.name} for one)`
    : `${d.summarizerModel ?? d.summarizer} (${name("summarizerModel")})`
  return [
    ["strategy", `${d.strategy} (${name("strategy")})`],
    ...(d.strategy === "noop" ? [] : [["token budget", `${d.tokenBudget} tokens (${name("tokenBudget")})`] as const]),
    ...(summarizes
      ? [
        ["recent turns always shown", `${d.kRawTurns} (${name("kRawTurns")})`] as const,
        [
          "a summary is made",
          d.chunkSummarizeThreshold === null
            ? `when unsummarized turns fill ${percent(d.highWater)} of the room for turns (${name("highWater")}), ` +
              `down to ${percent(d.lowWater)} (${name("lowWater")})`
            : `when the summary and the unsummarized turns pass ${d.chunkSummarizeThreshold} tokens ` +
              `(${name("chunkSummarizeThreshold")})`
        ] as const,
        [
          "turns shown",
          d.view === "stable"
            ? `every unsummarized turn: the prompt only grows between summaries (${name("view")} stable)`
            : `the newest that fit, summarized or not (${name("view")} full)`
        ] as const,
        ["summary at most", `${d.summaryTokenCap} tokens (${name("summaryTokenCap")})`] as const,
        [
          "older turns recalled",
          d.recall === "off"
            ? `none (${name("recall")} off)`
            : `by a ${d.recall} search for the next message, in up to ${percent(d.recallTokenBudget)} of the ` +
              `budget (${name("recall")}, ${name("recallTokenBudget")})`
        ] as const
      ]
      : []),
    ...(d.strategy === "summarization"
      ? [
        [
          "summary updated",
          d.mode === "full"
            ? `from the original messages each time (${name("mode")} full)`
            : `from the last summary and the new turns (${name("mode")} incremental)`
        ] as const
      ]
      : []),
    ["store", store],
    ...(summarizes ? [["summarizer", summarizer] as const] : []),
    [
      "token counts",
      d.tokenizer === "exact"
        ? `exact, o200k (${name("tokenizer")})`
        : `approximate, characters / 4 (${name("tokenizer")})`
    ]
  ]
}

/** The description as one line: the rows, `what: value (option)`, between semicolons. */
export const describeLine = (options: ChatMemoryConfig.Options): string =>
  rows(options).map(([what, value]) => `${what}: ${value}`).join("; ")

/** A conversation's settings with the strategy that writes it recorded, as `setSettings` takes them. */
export const withStrategy = (settings: ConversationSettings, strategy: StrategyName) =>
  Schema.encode(ConversationSettings)(new ConversationSettings({ ...settings, strategy })).pipe(Effect.orDie)
