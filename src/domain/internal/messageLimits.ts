/**
 * The limits of a message a caller gives, and when it may say it was said.
 */
import { DateTime, Schema } from "effect"
import { reasonOr } from "./untrusted.js"

/** Tokens a chat format spends on each message besides its content: role markers, separators. */
export const MessageOverhead = 4

/** The longest message content accepted, in UTF-16 code units (4 Mi). */
export const MaxContentLength = 4 * 1024 * 1024

/**
 * The longest metadata accepted, as the length of its JSON text, in UTF-16 code units (1 Mi). Each
 * JSON value in it (`attributes`, tool call `params`) nests at most `MaxJsonDepth` (32) levels.
 */
export const MaxMetadataLength = 1024 * 1024

/**
 * The most tool calls one assistant message may carry.
 */
export const MaxToolCalls = 128

/**
 * How far a caller's `createdAt` may be ahead of the write's clock, in milliseconds (5 minutes).
 * The host's clock and the memory's may disagree a little. A time further ahead was not said yet,
 * often a local time written as UTC, and `addMessages` refuses it.
 */
export const MaxClockSkewMillis = 5 * 60 * 1000

// ISO 8601: a date, `T`, a time (seconds and their fraction optional) and a zone, `Z` or an
// offset. A time without a zone is refused: it is local to a zone it does not name.
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

const daysIn = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Why a text is not a date and time `CreatedAt` takes, or undefined when it is one. */
const isoDateTimeProblem = (text: string): string | undefined => {
  const match = isoDateTime.exec(text)
  if (match === null) {
    return "must be an ISO 8601 date and time with a time zone, e.g. \"2026-03-14T09:12:00Z\""
  }
  // The groups are digits, or absent (seconds and offset: zero).
  const part = (group: number): number => Number(match[group] ?? 0)
  const [year, month, day] = [part(1), part(2), part(3)]
  if (
    month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || part(4) > 23 || part(5) > 59 ||
    part(6) > 59 || part(7) > 23 || part(8) > 59
  ) {
    return "is not a date and time of the calendar (a month, day, hour, minute, second or offset out of range)"
  }
  // Every store holds the years 1000 to 9999 (UTC) to the millisecond. PGlite's driver reads a
  // year before 100 as one of the 1900s or 2000s.
  const time = DateTime.make(text)
  const utcYear = time._tag === "Some" ? DateTime.getPartUtc(time.value, "year") : 0
  return utcYear < 1000 || utcYear > 9999 ? "must lie in the years 1000 to 9999 (UTC)" : undefined
}

/**
 * When a message was said, as a caller gives it: an ISO 8601 date and time with a time zone, `Z`
 * or an offset such as `+01:00`. Seconds and their fraction are optional. It must lie in the
 * years 1000 to 9999 (UTC) and decodes into a `DateTime.Utc`. Every store keeps it to the
 * millisecond.
 */
export const CreatedAt = Schema.compose(
  Schema.String.annotations({
    message: reasonOr("must be an ISO 8601 date and time, as a string, e.g. \"2026-03-14T09:12:00Z\"")
  }).pipe(Schema.filter((text) => isoDateTimeProblem(text) ?? true)),
  Schema.DateTimeUtc
).annotations({ identifier: "CreatedAt" })

/**
 * Why a caller's `createdAt` cannot be stored by a write at `now`, or undefined when it can. It
 * cannot when it lies more than `MaxClockSkewMillis` after `now`. Any earlier time is accepted,
 * whatever the times before it: the seq, not the time, orders the log.
 */
export const createdAtProblem = (createdAt: DateTime.Utc, now: DateTime.Utc): string | undefined =>
  DateTime.toEpochMillis(createdAt) - DateTime.toEpochMillis(now) > MaxClockSkewMillis
    ? `must not be later than the time of the write (${DateTime.formatIso(now)}) by more than ${
      MaxClockSkewMillis / 60_000
    } minutes`
    : undefined
