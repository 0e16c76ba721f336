/**
 * The command line's memory settings: flags that override the environment variables of
 * `ChatMemoryVariables` (each variable with a flag there has it here), the options they resolve
 * to, and how to describe them.
 */
import { Options } from "@effect/cli"
import { Config, ConfigProvider, Effect, Option } from "effect"
import * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryVariables from "../layers/ChatMemoryVariables.js"

const { variables } = ChatMemoryVariables

/** The variables a flag overrides, keyed by the option they set, in the table's order. */
const flagged = Object.entries(variables).flatMap((
  [key, variable]: [string, ChatMemoryVariables.Variable<unknown>]
) => (variable.flag === undefined ? [] : [{ key, name: variable.name, flag: variable.flag }]))

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
 * The flags of a command that reads a stored conversation: `--strategy` defaults to the strategy
 * that wrote it (recorded in its settings).
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
 * The command line's own defaults, under the flags and the environment: PGlite in
 * `./.chat-memory`, so that `replay`, `context`, `inspect` and `chat` see each other's
 * conversations (the library's default store is in memory).
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
 * The flags laid over `environment` (the process's variables when the program runs, whatever a
 * test gives otherwise), over the command line's own defaults.
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

/** Runs `effect` with the flags laid over the configuration in place (the environment) as its configuration. */
export const withFlags = (given: Flags) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.configProviderWith((environment) => Effect.withConfigProvider(effect, provider(given, environment)))

/** The memory's options from the flags and the environment. */
export const resolve = (given: Flags) => withFlags(given)(ChatMemoryConfig.config)

/** Whether the flags or the environment name a strategy (rather than leaving the default). */
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
    ? [`budget ${d.tokenBudget}`]
    : [
      `budget ${d.tokenBudget}`,
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
