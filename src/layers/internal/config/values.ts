/**
 * Reads one configuration value from text: a choice, a whole number, a share, an optional word.
 * The setting's schema checks each number. A refusal names what was expected and what was given.
 */
import { Config, ConfigError, Either, Option, ParseResult, type Schema, SchemaAST } from "effect"

const decimalDigits = /^[0-9]+$/

const decimalShare = /^[0-9]+(\.[0-9]+)?$/

/** What `schema` accepts, in words: its description. */
const expected = (schema: Schema.Schema<number>, fallback: string): string =>
  Option.getOrElse(SchemaAST.getDescriptionAnnotation(schema.ast), () => fallback)

/** `value` if `schema` accepts it, else an error naming what it expects and the text given. */
const checked = (schema: Schema.Schema<number>, text: string, value: number, what: string) =>
  Either.mapLeft(
    ParseResult.decodeUnknownEither(schema)(value),
    () => ConfigError.InvalidData([], `must be ${what}, got "${text}"`)
  )

/** One of the literals of `schema`, `fallback` when unset. */
export const choice = <const A extends ReadonlyArray<string>>(
  schema: { readonly literals: A },
  name: string,
  fallback: A[number]
): Config.Config<A[number]> => Config.literal(...schema.literals)(name).pipe(Config.withDefault(fallback))

/**
 * A whole number in decimal digits only, that `schema` accepts. `Config.integer` would also take
 * `0x1000`, `0b11` or `1e3`, which nobody means for a token budget.
 */
export const wholeNumber = (name: string, schema: Schema.Schema<number>): Config.Config<number> => {
  const what = expected(schema, "a whole number")
  return Config.string(name).pipe(
    Config.mapOrFail((text) =>
      decimalDigits.test(text)
        ? checked(schema, text, Number(text), what)
        : Either.left(ConfigError.InvalidData([], `must be ${what} in decimal digits, got "${text}"`))
    )
  )
}

/** A share from 0 to 1 in decimal notation (`0.9`, `0.25`, `1`) that `schema` accepts. */
export const share = (name: string, schema: Schema.Schema<number>): Config.Config<number> => {
  const what = expected(schema, "a share")
  return Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const value = Number(text)
      return decimalShare.test(text) && value >= 0 && value <= 1
        ? checked(schema, text, value, what)
        : Either.left(ConfigError.InvalidData([], `must be a number from 0 to 1 (e.g. 0.9), got "${text}"`))
    })
  )
}

/** An optional value that is not blank when set: a blank value is a mistake, not an absence. */
export const optionalNonBlank = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({
        message: "must not be blank (unset it instead)",
        validation: (value) => value.trim().length > 0
      })
    )
  )

/** One word of a hosted prompt's reference: not blank, no spaces or control characters. */
export const promptWord = (name: string, example: string) =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({
        message: `must be ${example}: not blank, no spaces`,
        validation: (value) => /^[^\s\p{Cc}]+$/u.test(value)
      })
    )
  )

/** Whether `url` is a PostgreSQL connection URL. */
export const isPostgresUrl = (url: string): boolean =>
  URL.canParse(url) && ["postgres:", "postgresql:"].includes(new URL(url).protocol)

/** Whether `url` is an http(s) URL. */
export const isHttpUrl = (url: string): boolean =>
  URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol)
