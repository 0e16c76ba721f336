/**
 * Failures as the command line shows them: one line, no stack trace, naming the variable or flag
 * at fault.
 */
import type { PlatformError } from "@effect/platform/Error"
import { ConfigError, Effect, Either, type ParseResult, Predicate, Schema } from "effect"
import { firstProblem } from "../errors/internal/decode.js"
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

/**
 * The command line's words for the fields of the memory's calls it fills in: a refused call names
 * the flag or argument the user typed.
 */
const fieldWords: Readonly<Record<string, string>> = {
  conversationId: "conversation id",
  "options.userId": "--user",
  "options.limit": "--limit",
  "options.query": "--query"
}

/** A memory call's refusal of a field the command line filled in, in the command line's words. */
const refusedField = (error: unknown): string | undefined => {
  if (
    !Predicate.isTagged(error, "DataValidationError") || !Predicate.hasProperty(error, "path") ||
    !Predicate.hasProperty(error, "reason") || typeof error.path !== "string"
  ) return undefined
  const words = fieldWords[error.path]
  return words === undefined ? undefined : `invalid ${words}: ${String(error.reason)}`
}

/**
 * Checks `value` as the memory would, before a command acts on it: a bad one fails with a
 * `CliError` naming `what` (a flag or an argument) and the first problem.
 */
export const check = <A>(schema: Schema.Schema<A, string>, what: string, value: string): Effect.Effect<A, CliError> =>
  Either.match(Schema.decodeEither(schema, { errors: "first" })(value), {
    onLeft: (error) => Effect.fail(new CliError({ reason: `invalid ${what}: ${firstIssue(error)}` })),
    onRight: Effect.succeed
  })

/** Why a file could not be read, in a few words. */
export const fileProblem = (error: PlatformError): string => {
  if (error._tag === "SystemError") {
    switch (error.reason) {
      case "NotFound":
        return "file not found"
      case "PermissionDenied":
        return "permission denied"
      case "BadResource":
        return "not a file"
    }
  }
  return error.message
}

/** The first problem of a parse, with the path to it (`questions[3].factKey: is missing`). */
export const firstIssue = (error: ParseResult.ParseError): string => {
  const { path, reason } = firstProblem(error, "")
  // An empty path is the whole input, named by what the caller adds before.
  return path === "input" ? reason : `${path}: ${reason}`
}

/** The failure as one line. A store failure with a `detail` has named its cause already. */
export const describe = (error: unknown): string => {
  const refused = refusedField(error)
  const text = ConfigError.isConfigError(error)
    ? configMessage(error)
    : refused !== undefined
    ? refused
    : Predicate.isTagged(error, "RepositoryError") && Predicate.hasProperty(error, "cause") &&
        !(Predicate.hasProperty(error, "detail") && typeof error.detail === "string")
    ? withCause(causeMessage(error), causeMessage(error.cause))
    : causeMessage(error) ?? String(error)
  return text.replaceAll(/\s*\n\s*/g, " ")
}
