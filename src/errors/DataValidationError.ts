/**
 * Bad input: refused before anything is stored.
 *
 * @since 0.1.0
 */
import { Effect, ParseResult, Schema } from "effect"

/**
 * An input was refused. `path` names the bad field (`messages[2].content`,
 * `options.limit`, `conversationId`); nothing of the call was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class DataValidationError extends Schema.TaggedError<DataValidationError>()("DataValidationError", {
  /** The public method that refused the input. */
  operation: Schema.String,
  /** The path of the bad field, as written in the caller's input. */
  path: Schema.String,
  /** What is wrong with it. */
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: invalid ${this.path}: ${this.reason}`
  }
}

/**
 * Renders a parse path as the caller wrote it: `messages[2].metadata.toolCalls[0].id`, under the
 * argument's name `root`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>, root: string): string => {
  let out = root
  for (const key of path) {
    out = typeof key === "number" ? `${out}[${key}]` : out.length === 0 ? String(key) : `${out}.${String(key)}`
  }
  return out.length === 0 ? "input" : out
}

const parseOptions = { errors: "first", onExcessProperty: "error" } as const

/**
 * A decoder of outside input for the public method `operation`: the first problem `schema` finds
 * becomes a `DataValidationError` whose path starts at `root` (the argument's name). Excess
 * properties are refused, not dropped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = <A, I>(schema: Schema.Schema<A, I>, operation: string, root: string) => {
  const decodeUnknown = Schema.decodeUnknown(schema, parseOptions)
  return (input: unknown): Effect.Effect<A, DataValidationError> =>
    Effect.mapError(decodeUnknown(input), (error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return new DataValidationError({
        operation,
        path: formatPath(issue?.path ?? [], root),
        reason: issue?.message ?? "is invalid"
      })
    })
}
