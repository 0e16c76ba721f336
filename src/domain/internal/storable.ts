/**
 * Text and JSON that every store can hold byte for byte, and the guard that reads untrusted input.
 *
 * @since 0.1.0
 */
import { Array as Arr, type Effect, ParseResult, Schema, type SchemaAST } from "effect"
import { copyUntrusted, explain, type Limits, notData, reasonOr, setOwn, tooLarge } from "./untrusted.js"

// PostgreSQL `text` and `jsonb` cannot hold U+0000. An unpaired UTF-16 surrogate has no UTF-8
// encoding, so drivers replace it with U+FFFD. Either would change on its way through a SQL store.
const nul = "\u0000"
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const storableProblem = (s: string): string | undefined => {
  if (s.includes(nul)) return "must not contain NUL (U+0000) characters"
  if (loneSurrogate.test(s)) return "must be well-formed Unicode (no unpaired surrogates)"
  return undefined
}

/**
 * Checks that a string can be stored byte for byte.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isStorable = (s: string): boolean => storableProblem(s) === undefined

const loneSurrogates = new RegExp(loneSurrogate.source, "g")

/**
 * Makes a string storable: every NUL and unpaired surrogate becomes U+FFFD. Returns the text and
 * how many characters were replaced. For text that is repaired rather than refused, such as model
 * output.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toStorable = (s: string): { readonly text: string; readonly replaced: number } => {
  if (isStorable(s)) return { text: s, replaced: 0 }
  let replaced = 0
  const text = s.replaceAll(nul, () => {
    replaced += 1
    return "\uFFFD"
  }).replace(loneSurrogates, () => {
    replaced += 1
    return "\uFFFD"
  })
  return { text, replaced }
}

/**
 * A string without NUL characters or unpaired surrogates. Anything else is refused as "must be a
 * string", without printing the value: printing a hostile object runs its getters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StorableString = Schema.String.annotations({ message: reasonOr("must be a string") }).pipe(
  Schema.filter((s) => storableProblem(s) ?? true)
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
 * A key of a JSON object: storable, and not `__proto__`. Plain objects cannot hold that key as
 * data: assigning it sets the prototype.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonKey = StorableString.pipe(
  Schema.filter((key) => key !== "__proto__" || "must not be \"__proto__\"")
)

/**
 * The deepest a JSON value may nest arrays and objects: `{}` is one level, `{"a": []}` two.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxJsonDepth = 32

/**
 * The most values one guarded input may hold before it is refused as too large. Each array,
 * object and primitive counts, repeats included. It bounds the work spent on any input: a shared
 * sub-object referenced twice at each of 32 levels is 2^32 values.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxJsonValues = 1_048_576

/**
 * Decodes untrusted input with `schema`, safely. The input is first read into a fresh plain copy:
 * each property once, inside a guard, with cycles, depth and size bounded. `schema` decodes the
 * copy, so nothing can crash the decoding or alias the caller's objects. A throwing getter or
 * proxy trap, a cycle, a `Date`, a `Map`, a class instance, a function or a bigint is refused at
 * its path, never a defect (unless `schema` refuses something else first).
 *
 * The copy is canonical, the form every store returns JSON in. Object keys follow PostgreSQL's
 * `jsonb` order: shorter keys first (length in UTF-8 bytes), then byte order. As in any JavaScript
 * object, integer-like keys such as `"2"` and `"10"` still come first, in ascending order. `-0`
 * becomes `0`, and properties whose value is `undefined` are left out. The copy is decoded in its
 * key order.
 *
 * Options:
 *
 * - `maxDepth` (default `MaxJsonDepth`) and `maxValues` (default `MaxJsonValues`) bound the copy.
 * - `shallow` copies only the top-level array or object, for a schema whose elements guard
 *   themselves (a list of `MessageInput`s).
 * - `keepOrder` keeps the input's key order instead of `jsonb`'s. It is for JSON whose text must
 *   come back byte for byte, such as tool call params and results replayed to a provider.
 *
 * @since 0.1.0
 * @category combinators
 */
export const fromUntrusted = <A, I, R>(
  schema: Schema.Schema<A, I, R>,
  options?: {
    readonly maxDepth?: number
    readonly maxValues?: number
    readonly shallow?: boolean
    readonly keepOrder?: boolean
  }
): Schema.Schema<A, I, R> => {
  const limits: Limits = {
    maxDepth: options?.maxDepth ?? MaxJsonDepth,
    maxValues: options?.maxValues ?? MaxJsonValues,
    shallow: options?.shallow ?? false,
    keepOrder: options?.keepOrder ?? false
  }
  return Schema.declare([schema], {
    decode: (inner) => {
      const decodeInner = ParseResult.decodeUnknown(inner)
      return (input, parseOptions, ast) => {
        const copy = copyUntrusted(input, limits)
        if (copy.tooLarge) return ParseResult.fail(new ParseResult.Type(ast, input, tooLarge(limits.maxValues)))
        return ParseResult.mapError(
          decodeInner(copy.value, { ...parseOptions, propertyOrder: "original" }),
          (issue) => explain(issue, copy.problems)
        )
      }
    },
    encode: (inner) => {
      const encodeInner = ParseResult.encodeUnknown(inner)
      return (input, parseOptions) => encodeInner(input, parseOptions)
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Json
// ---------------------------------------------------------------------------------------------

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

class JsonProblem {
  constructor(readonly path: ReadonlyArray<PropertyKey>, readonly actual: unknown, readonly reason: string) {}
}

/** The guarded copy of a value as `Json`, or its first problem (in key order, depth first). */
const toJson = (
  value: unknown,
  problems: ReadonlyMap<symbol, string>,
  onExcessProperty: SchemaAST.ParseOptions["onExcessProperty"]
): Json | JsonProblem => {
  const path: Array<PropertyKey> = []
  const fail = (actual: unknown, reason: string) => new JsonProblem([...path], actual, reason)
  const go = (value: unknown): Json | JsonProblem => {
    if (value === null || typeof value === "boolean") return value
    if (typeof value === "number") return Number.isFinite(value) ? value : fail(value, "must be a finite number")
    if (typeof value === "string") {
      const reason = storableProblem(value)
      return reason === undefined ? value : fail(value, reason)
    }
    if (value === undefined) return fail(value, "must not be undefined (JSON has no undefined: use null)")
    if (typeof value === "symbol") return fail(value, problems.get(value) ?? notData("a symbol"))
    if (Array.isArray(value)) {
      const out: Array<Json> = []
      for (let i = 0; i < value.length; i++) {
        path.push(i)
        const item = go(value[i])
        path.pop()
        if (item instanceof JsonProblem) return item
        out.push(item)
      }
      return out
    }
    if (typeof value !== "object") return fail(value, notData(typeof value))
    const out: Record<string, Json> = {}
    for (const key of Object.keys(value)) {
      const keyProblem = storableProblem(key) ?? (key === "__proto__" ? "must not be \"__proto__\"" : undefined)
      path.push(key)
      // A key JSON objects may not hold is an excess property, as in a `Schema.Record` of
      // `JsonKey`s. It is refused when decoding outside input, left out or kept when only checking.
      if (keyProblem !== undefined && onExcessProperty !== "preserve") {
        if (onExcessProperty === "error") return fail(key, `is a key that ${keyProblem}`)
        path.pop()
        continue
      }
      const item = go(Reflect.get(value, key))
      path.pop()
      if (item instanceof JsonProblem) return item
      setOwn(out, key, item)
    }
    return out
  }
  return go(value)
}

const jsonLimits: Limits = { maxDepth: MaxJsonDepth, maxValues: MaxJsonValues, shallow: false }

const parseJson = (
  input: unknown,
  options: SchemaAST.ParseOptions,
  ast: SchemaAST.AST
): Effect.Effect<Json, ParseResult.ParseIssue> => {
  const copy = copyUntrusted(input, jsonLimits)
  if (copy.tooLarge) return ParseResult.fail(new ParseResult.Type(ast, input, tooLarge(jsonLimits.maxValues)))
  const json = toJson(copy.value, copy.problems, options.onExcessProperty)
  if (!(json instanceof JsonProblem)) return ParseResult.succeed(json)
  const issue = new ParseResult.Type(ast, json.actual, json.reason)
  return ParseResult.fail(
    Arr.isNonEmptyReadonlyArray(json.path) ? new ParseResult.Pointer(json.path, input, issue) : issue
  )
}

/**
 * A JSON value whose strings are storable and whose numbers are finite, at most `MaxJsonDepth`
 * levels deep. Any input is read safely (see `fromUntrusted`): a getter or a proxy is read once.
 * What is not JSON is refused at its path: a `Date`, a `Map`, a class instance, a function, a
 * bigint, `undefined` in an array, a cycle. Decoding returns a fresh copy in canonical form. A key
 * that is not a `JsonKey` is refused with `onExcessProperty: "error"`, and otherwise left out, as
 * by a `Schema.Record` of `JsonKey`s.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Json: Schema.Schema<Json> = Schema.declare([], {
  decode: () => parseJson,
  encode: () => parseJson
}, { identifier: "Json" })

/** The longest id accepted, in characters. */
const MaxKeyLength = 255

// Control characters (C0, DEL, C1) make ids unprintable in logs and ambiguous in URLs and keys.
const controlCharacter = /\p{Cc}/u

/**
 * An id the app chooses, branded `brand`: non-empty, at most 255 characters, storable, no control
 * characters. Compared code unit for code unit, with no Unicode normalisation.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Key = <const Brand extends string>(brand: Brand) =>
  StorableString.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(MaxKeyLength, { message: () => `must be at most ${MaxKeyLength} characters` }),
    Schema.filter((s) => !controlCharacter.test(s), { message: () => "must not contain control characters" }),
    Schema.brand(brand),
    Schema.annotations({ identifier: brand })
  )
