/**
 * Decoding of outside input into domain values, refusing bad input with a `DataValidationError`
 * that names the bad field.
 */
import { Effect, ParseResult, Schema } from "effect"
import { DataValidationError } from "../errors/DataValidationError.js"

/** Renders a parse path as the caller wrote it: `messages[2].metadata.toolCalls[0].id`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>, root: string): string => {
  let out = root
  for (const key of path) {
    out = typeof key === "number" ? `${out}[${key}]` : out.length === 0 ? String(key) : `${out}.${String(key)}`
  }
  return out.length === 0 ? "input" : out
}

const parseOptions = { errors: "first", onExcessProperty: "error" } as const

/**
 * Decodes `input` with `schema` for the public method `operation`; the first problem becomes a
 * `DataValidationError` whose path starts at `root` (the argument's name).
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
