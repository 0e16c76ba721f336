/**
 * Text that every store can hold byte for byte: no NUL characters, no unpaired surrogates.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

// PostgreSQL `text` and `jsonb` cannot hold U+0000, and an unpaired UTF-16 surrogate has no UTF-8
// encoding (drivers replace it with U+FFFD), so either would change on its way through a SQL store.
const nul = "\u0000"
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Checks that a string can be stored byte for byte.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isStorable = (s: string): boolean => !s.includes(nul) && !loneSurrogate.test(s)

/**
 * A string without NUL characters or unpaired surrogates.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StorableString = Schema.String.pipe(
  Schema.filter((s) => {
    if (s.includes(nul)) return "must not contain NUL (U+0000) characters"
    if (loneSurrogate.test(s)) return "must be well-formed Unicode (no unpaired surrogates)"
    return true
  })
)

/**
 * A non-empty identifier-like string: storable, 1 to 255 characters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Identifier = StorableString.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(255, { message: () => "must be at most 255 characters" })
)

/**
 * A key of a JSON object: storable, and not `__proto__`, which plain objects cannot hold as data
 * (assigning it sets the prototype: the value would be lost, or worse, inherited).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonKey = StorableString.pipe(
  Schema.filter((key) => key !== "__proto__" || "must not be \"__proto__\"")
)

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<Json>
  | { readonly [key: string]: Json }

/**
 * A JSON value whose strings are storable and whose numbers are finite.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Json: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Finite,
  StorableString,
  Schema.Array(Schema.suspend((): Schema.Schema<Json> => Json)),
  Schema.Record({ key: JsonKey, value: Schema.suspend((): Schema.Schema<Json> => Json) })
).annotations({ identifier: "Json" })
