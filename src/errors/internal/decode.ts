/**
 * Decoding a caller's input at the edge: a refusal names the bad field as the caller wrote it.
 */
import { Effect, ParseResult, Schema } from "effect"
import { DataValidationError } from "../DataValidationError.js"

const parseOptions = { errors: "first", onExcessProperty: "error" } as const

/**
 * Renders a parse path as the caller wrote it: `messages[2].metadata.toolCalls[0].id`, under the
 * argument's name `root`.
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>, root: string): string => {
  let out = root
  for (const key of path) {
    out = typeof key === "number" ? `${out}[${key}]` : out.length === 0 ? String(key) : `${out}.${String(key)}`
  }
  return out.length === 0 ? "input" : out
}

/** The first problem of a parse: the path to it under `root`, and what is wrong there. */
export const firstProblem = (
  error: ParseResult.ParseError,
  root: string
): { readonly path: string; readonly reason: string } => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return { path: formatPath(issue?.path ?? [], root), reason: issue?.message ?? "is invalid" }
}

/**
 * A decoder of outside input for the public method `operation`. The first problem `schema` finds
 * becomes a `DataValidationError`, its path starting at `root`, the argument's name. Excess
 * properties are refused, not dropped.
 */
export const decode = <A, I>(schema: Schema.Schema<A, I>, operation: string, root: string) => {
  const decodeUnknown = Schema.decodeUnknown(schema, parseOptions)
  return (input: unknown): Effect.Effect<A, DataValidationError> =>
    Effect.mapError(
      decodeUnknown(input),
      (error) => new DataValidationError({ operation, ...firstProblem(error, root) })
    )
}
