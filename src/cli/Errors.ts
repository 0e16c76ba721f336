/**
 * Failures as the command line shows them: one line, no stack trace, naming the variable or flag
 * at fault.
 */
import { ConfigError, Predicate, Schema } from "effect"
import { flagOf } from "./Settings.js"

/**
 * A failure of the command line itself, such as a missing model or an unknown conversation, with
 * the message to show.
 */
export class CliError extends Schema.TaggedError<CliError>()("CliError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

const variableWithFlag = (path: ReadonlyArray<string>): string => {
  const variable = path.join(".")
  const flag = flagOf(variable)
  return flag === undefined ? variable : `${variable} (${flag})`
}

const configMessage = (error: ConfigError.ConfigError): string => {
  switch (error._op) {
    case "And":
      return `${configMessage(error.left)}; ${configMessage(error.right)}`
    case "Or":
      // Flags over the environment. A value found in one source beats its absence in the other.
      return ConfigError.isMissingDataOnly(error.left) ? configMessage(error.right) : configMessage(error.left)
    case "InvalidData":
      return `invalid ${variableWithFlag(error.path)}: ${error.message}`
    case "MissingData":
      return `missing ${variableWithFlag(error.path)}: ${error.message}`
    case "SourceUnavailable":
      return `configuration unavailable at ${error.path.join(".")}: ${error.message}`
    case "Unsupported":
      return `unsupported configuration at ${error.path.join(".")}: ${error.message}`
  }
}

const causeMessage = (cause: unknown): string | undefined =>
  Predicate.hasProperty(cause, "message") && typeof cause.message === "string" && cause.message.length > 0
    ? cause.message
    : undefined

/** A store failure's message, then its cause's, unless the message already says it. */
const withCause = (message: string | undefined, cause: string | undefined): string =>
  message === undefined
    ? cause ?? ""
    : cause === undefined || message.includes(cause.replaceAll(/\s*\n\s*/g, " "))
    ? message
    : `${message}: ${cause}`

/** The failure as one line. A store failure with a `detail` has named its cause already. */
export const describe = (error: unknown): string => {
  const text = ConfigError.isConfigError(error)
    ? configMessage(error)
    : Predicate.isTagged(error, "RepositoryError") && Predicate.hasProperty(error, "cause") &&
        !(Predicate.hasProperty(error, "detail") && typeof error.detail === "string")
    ? withCause(causeMessage(error), causeMessage(error.cause))
    : causeMessage(error) ?? String(error)
  return text.replaceAll(/\s*\n\s*/g, " ")
}
