/**
 * Checks across configuration values: the store they choose, and values valid alone but not
 * together. Each refusal names the variable at fault.
 */
import { ConfigError, Either, Option, Redacted } from "effect"
import type { StrategyName } from "../../../domain/ConversationSettings.js"
import type { Store } from "./options.js"
import { isPostgresUrl } from "./values.js"
import { variables } from "./variables.js"

/** The environment values the checks look at. Absent means given in code, not read. */
export interface Read {
  readonly store?: Option.Option<"memory" | "pglite" | "postgres"> | undefined
  readonly dataDir?: Option.Option<string> | undefined
  readonly databaseUrl?: Option.Option<Redacted.Redacted> | undefined
  readonly tokenBudget?: number | undefined
  readonly summaryTokenCap?: number | undefined
  readonly highWater?: number | undefined
  readonly lowWater?: number | undefined
  readonly mode?: "incremental" | "full" | "layered" | undefined
  readonly recall?: "off" | "lexical" | "hybrid" | undefined
  /** Whether the OpenAI variables name a server; absent when not read. */
  readonly openAi?: boolean | undefined
  readonly summaryPromptId?: Option.Option<string> | undefined
  readonly summarizerModel?: Option.Option<string> | undefined
}

/** The strategies that summarize. */
export const summarizing: ReadonlySet<StrategyName> = new Set(["summarization", "hierarchical"])

/** The store the environment chooses: PGlite when only `MEMORY_DATA_DIR` is set, in memory when neither is. */
export const storeOf = (read: Read): Either.Either<Store, ConfigError.ConfigError> => {
  const dataDir = read.dataDir ?? Option.none()
  const store = Option.getOrElse(read.store ?? Option.none(), () => Option.isSome(dataDir) ? "pglite" : "memory")
  switch (store) {
    case "memory":
      return Either.right({ _tag: "memory" })
    case "pglite":
      return Either.right({ _tag: "pglite", dataDir: Option.getOrUndefined(dataDir) })
    case "postgres": {
      const databaseUrl = variables.databaseUrl.name
      const url = read.databaseUrl ?? Option.none()
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

/** The first conflict between values, if any. */
export const conflict = (read: Read, strategyName: StrategyName): ConfigError.ConfigError | undefined => {
  const { highWater, lowWater, mode, openAiApiKey, openAiBaseUrl, recall, strategy, summarizerModel } = variables
  const { summaryPromptId, summaryTokenCap, tokenBudget } = variables
  const provider = `set ${openAiApiKey.name}, or ${openAiBaseUrl.name}`
  const noOpenAi = read.openAi === false
  if (
    summarizing.has(strategyName) && read.summaryTokenCap !== undefined && read.tokenBudget !== undefined &&
    read.summaryTokenCap >= read.tokenBudget
  ) {
    return ConfigError.InvalidData(
      [summaryTokenCap.name],
      `must be below ${tokenBudget.name} (${read.tokenBudget}), got ${read.summaryTokenCap}`
    )
  }
  if (read.lowWater !== undefined && read.highWater !== undefined && read.lowWater >= read.highWater) {
    return ConfigError.InvalidData(
      [lowWater.name],
      `must be below ${highWater.name} (${read.highWater}), got ${read.lowWater}`
    )
  }
  if (read.summaryPromptId !== undefined && Option.isSome(read.summaryPromptId) && noOpenAi) {
    return ConfigError.InvalidData([summaryPromptId.name], `a hosted prompt needs the OpenAI summarizer: ${provider}`)
  }
  if (read.summarizerModel !== undefined && Option.isSome(read.summarizerModel) && noOpenAi) {
    return ConfigError.InvalidData(
      [summarizerModel.name],
      `a summarizer model needs a server to reach it: ${provider} ` +
        `for an OpenAI-compatible server (e.g. http://localhost:11434/v1); unset it for the offline summarizer`
    )
  }
  if (strategyName === "hierarchical" && read.mode === "layered") {
    return ConfigError.InvalidData(
      [mode.name],
      `must be incremental or full with ${strategy.name}=hierarchical, got layered`
    )
  }
  if (read.recall === "hybrid" && summarizing.has(strategyName) && noOpenAi) {
    return ConfigError.MissingData(
      [recall.name],
      `${recall.name}=hybrid needs an embedding model server: ${provider} for an OpenAI-compatible one ` +
        `(model: ${variables.embeddingModel.name})`
    )
  }
  return undefined
}
