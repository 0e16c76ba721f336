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

/** A duration of zero or more, from any `Duration.DurationInput`. */
export const NonNegativeDuration = Schema.transform(Input, Schema.DurationFromSelf, {
  strict: true,
  decode: (input) => Duration.decode(input),
  encode: (duration) => duration
}).pipe(Schema.greaterThanOrEqualToDuration(0, { message: () => "must be a duration of zero or more" }))
