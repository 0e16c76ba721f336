/**
 * The command line's memory settings: flags that override the environment variables of
 * `ChatMemoryConfig`, the options they resolve to, and how to describe them.
 */
import { Options } from "@effect/cli"
import { Config, ConfigProvider, Effect, Option } from "effect"
import * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"

const { variables } = ChatMemoryConfig

const text = (name: string, pseudoName: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(pseudoName), Options.withDescription(description), Options.optional)

/** The default data directory of the command line: PGlite keeps conversations there between runs. */
export const defaultDataDir = ".chat-memory"

/**
 * The flags, each overriding one variable. Values are checked by the configuration itself, so a
 * bad flag and a bad variable fail alike, naming both.
 */
export const flags = {
  strategy: text("strategy", "name", `${ChatMemoryConfig.strategies.join(" | ")} (${variables.strategy})`),
  store: text("store", "name", `${ChatMemoryConfig.stores.join(" | ")} (${variables.store})`),
  dataDir: text("data-dir", "path", `PGlite data directory (${variables.dataDir}; default ./${defaultDataDir})`),
  budget: text("budget", "tokens", `prompt token budget (${variables.promptTokenBudget})`),
  k: text("k-raw-turns", "turns", `turns always shown verbatim (${variables.kRawTurns})`).pipe(Options.withAlias("k")),
  threshold: text(
    "threshold",
    "tokens",
    `summary + buffer tokens that trigger a summary (${variables.chunkSummarizeThreshold})`
  ),
  cap: text("cap", "tokens", `summary token cap (${variables.summaryTokenCap})`),
  highWater: text("high-water", "share", `share of the room for turns that triggers a fold (${variables.highWater})`),
  lowWater: text("low-water", "share", `share of the room left unsummarized by a fold (${variables.lowWater})`),
  view: text("view", "name", `${ChatMemoryConfig.contextViews.join(" | ")} (${variables.view})`),
  mode: text("mode", "name", `${ChatMemoryConfig.summaryModes.join(" | ")} (${variables.mode})`),
  recall: text("recall", "name", `${ChatMemoryConfig.recallModes.join(" | ")} (${variables.recall})`),
  recallBudget: text(
    "recall-budget",
    "share",
    `share of the budget recalled turns may take (${variables.recallTokenBudget})`
  ),
  tokenizer: text("tokenizer", "name", `${ChatMemoryConfig.tokenizers.join(" | ")} (${variables.tokenizer})`),
  summarizerModel: text("summarizer-model", "model", `the summarizer's model (${variables.summarizerModel})`)
}

/**
 * The flags of a command that reads a stored conversation: `--strategy` defaults to the strategy
 * that wrote it (recorded in its settings).
 */
export const readingFlags = {
  ...flags,
  strategy: text(
    "strategy",
    "name",
    `${ChatMemoryConfig.strategies.join(" | ")} (${variables.strategy}); default: the one that wrote the conversation`
  )
}

/** The parsed flags. */
export type Flags = { readonly [K in keyof typeof flags]: Option.Option<string> }

/**
 * The command line's own defaults, under the flags and the environment: PGlite in
 * `./.chat-memory`, so that `replay`, `context`, `inspect` and `chat` see each other's
 * conversations (the library's default store is in memory).
 */
const cliDefaults = new Map([[variables.store, "pglite"], [variables.dataDir, defaultDataDir]])

/** The variable each flag overrides, and the flag as typed. */
const overridden = [
  ["strategy", variables.strategy, "--strategy"],
  ["store", variables.store, "--store"],
  ["dataDir", variables.dataDir, "--data-dir"],
  ["budget", variables.promptTokenBudget, "--budget"],
  ["k", variables.kRawTurns, "--k"],
  ["threshold", variables.chunkSummarizeThreshold, "--threshold"],
  ["cap", variables.summaryTokenCap, "--cap"],
  ["highWater", variables.highWater, "--high-water"],
  ["lowWater", variables.lowWater, "--low-water"],
  ["view", variables.view, "--view"],
  ["mode", variables.mode, "--mode"],
  ["recall", variables.recall, "--recall"],
  ["recallBudget", variables.recallTokenBudget, "--recall-budget"],
  ["tokenizer", variables.tokenizer, "--tokenizer"],
  ["summarizerModel", variables.summarizerModel, "--summarizer-model"]
] as const satisfies ReadonlyArray<readonly [keyof Flags, string, string]>

/** The flag that sets a variable, if any. */
export const flagOf = (variable: string): string | undefined => overridden.find(([, name]) => name === variable)?.[2]

/**
 * The flags laid over `environment` (the process's variables when the program runs, whatever a
 * test gives otherwise), over the command line's own defaults.
 */
const provider = (given: Flags, environment: ConfigProvider.ConfigProvider): ConfigProvider.ConfigProvider => {
  const map = new Map<string, string>()
  for (const [key, variable] of overridden) {
    const value = given[key]
    if (Option.isSome(value)) map.set(variable, value.value)
  }
  return ConfigProvider.fromMap(map).pipe(
    ConfigProvider.orElse(() => environment),
    ConfigProvider.orElse(() => ConfigProvider.fromMap(cliDefaults))
  )
}

/** Runs `effect` with the flags laid over the configuration in place (the environment) as its configuration. */
export const withFlags = (given: Flags) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.configProviderWith((environment) => Effect.withConfigProvider(effect, provider(given, environment)))

/** The memory's options from the flags and the environment. */
export const resolve = (given: Flags) => withFlags(given)(ChatMemoryConfig.config)

/** Whether the flags or the environment name a strategy (rather than leaving the default). */
export const strategyNamed = (given: Flags) =>
  withFlags(given)(Effect.map(Config.option(Config.string(variables.strategy)), Option.isSome))

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
    promptTokenBudget: strategy === "noop" ? null : options.promptTokenBudget ?? null,
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

/** The description as one line. */
export const describeLine = (options: ChatMemoryConfig.Options): string => {
  const d = describe(options)
  const store = d.store === "pglite" ? `pglite ${d.dataDir === null ? "(in memory)" : `at ${d.dataDir}`}` : d.store
  const summarizer = d.summarizer === "openai"
    ? `openai ${d.summarizerModel}${d.summarizerUrl === null ? "" : ` at ${d.summarizerUrl}`}`
    : d.summarizer === "extractive"
    ? "extractive (offline)"
    : d.summarizer
  const knobs = d.strategy === "noop"
    ? []
    : d.strategy === "sliding-window"
    ? [`budget ${d.promptTokenBudget}`]
    : [
      `budget ${d.promptTokenBudget}`,
      `K ${d.kRawTurns}`,
      d.chunkSummarizeThreshold === null
        ? `watermarks ${d.highWater}/${d.lowWater}`
        : `threshold ${d.chunkSummarizeThreshold}`,
      `view ${d.view}`,
      `cap ${d.summaryTokenCap}`,
      d.recall === "off" ? "recall off" : `recall ${d.recall} ${d.recallTokenBudget}`
    ]
  const mode = d.strategy === "summarization" ? [`mode ${d.mode}`] : []
  return [`${d.strategy}`, ...knobs, ...mode, `store ${store}`, `summarizer ${summarizer}`, `tokenizer ${d.tokenizer}`]
    .join(", ")
}
