/**
 * Durations in options: any `Duration.DurationInput` ("30 seconds", a number of milliseconds, a
 * `Duration`), decoded once to a `Duration`.
 */
import { Duration, Option, Schema } from "effect"

/** A `Duration.DurationInput`, as written by the caller. */
const Input = Schema.declare(
  (input: unknown): input is Duration.DurationInput => Option.isSome(Duration.decodeUnknown(input)),
  { description: "a duration such as \"30 seconds\", or a number of milliseconds" }
)

/** A duration above zero, from any `Duration.DurationInput`. */
export const PositiveDuration = Schema.transform(Input, Schema.DurationFromSelf, {
  strict: true,
  decode: (input) => Duration.decode(input),
  encode: (duration) => duration
}).pipe(Schema.greaterThanDuration(0, { message: () => "must be a duration above zero" }))

/**
 * Whether an input is below zero. `Duration.decode` reads such an input as zero, so the check
 * runs on what the caller wrote.
 */
const isNegative = (input: Duration.DurationInput): boolean => {
  if (Duration.isDuration(input)) return false
  if (typeof input === "number") return input < 0
  if (typeof input === "bigint") return input < BigInt(0)
  if (typeof input === "string") return input.trimStart().startsWith("-")
  return input[0] * 1e9 + input[1] < 0
}

/** A duration of zero or more, from any `Duration.DurationInput`. */
export const NonNegativeDuration = Schema.transform(
  Input.pipe(Schema.filter((input) => !isNegative(input) || "must be a duration of zero or more")),
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: (input) => Duration.decode(input),
    encode: (duration) => duration
  }
)
