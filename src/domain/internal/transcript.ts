/**
 * Messages as text for a model: one line per message of a turn (`messageLine`), and the time labels
 * of a context (`timeLabel`, `onDifferentDays`).
 *
 * @since 0.1.0
 */
import { DateTime } from "effect"
import type { Message } from "../Message.js"

/**
 * The date (UTC) of a time, `2026-03-14`.
 *
 * @since 0.1.0
 * @category rendering
 */
// A time never changes, and a context renders the same facts' and turns' dates several times (to
// fit them, to count them, to fingerprint the prefix).
const dates = new WeakMap<DateTime.Utc, string>()

export const datePart = (time: DateTime.Utc): string => {
  const known = dates.get(time)
  if (known !== undefined) return known
  const date = DateTime.formatIso(time).slice(0, 10)
  dates.set(time, date)
  return date
}

/**
 * The line that dates the summary lines after it, `[2026-03-14]`. A summary of turns from several
 * days keeps the day of each line.
 *
 * @since 0.1.0
 * @category rendering
 */
export const dateHeading = (date: string): string => `[${date}]`

/**
 * The date a summary line names when it is a `dateHeading`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const headingDate = (line: string): string | undefined => /^\[(\d{4}-\d{2}-\d{2})\]$/.exec(line.trim())?.[1]

// Every line break a text may hold. A record's content must not start a line of the input.
const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g

/** A label on one line: line breaks and other control characters become spaces. */
const inline = (label: string): string => label.replace(/[\p{Cc}\u2028\u2029]+/gu, " ")

/**
 * Text that cannot forge the input's structure. The structure (section markers, `Turn n:`,
 * speakers) lives at the start of lines. A message's content continues on lines indented by two
 * spaces, so nothing a user, tool or model wrote can open a line as a marker, turn or speaker.
 */
const indented = (text: string): string => text.replace(lineBreak, "\n  ")

const speaker = (message: Pick<Message, "role" | "metadata">): string => {
  switch (message.role) {
    case "user":
      return "User"
    case "assistant":
      return message.metadata.modelVariant === undefined
        ? "Assistant"
        : `Assistant (${inline(message.metadata.modelVariant)})`
    case "tool":
      return message.metadata.toolName === undefined ? "Tool" : `Tool (${inline(message.metadata.toolName)})`
    case "system":
      return "System"
    case "summary":
      return "Summary"
  }
}

/**
 * One message as a line of a turn: `User: …`, `Assistant (mini): …`, tool calls in brackets. Its
 * further lines are indented by two spaces, so they never read as another message.
 *
 * @since 0.1.0
 * @category rendering
 */
export const messageLine = (message: Pick<Message, "role" | "content" | "metadata">): string => {
  const calls = (message.metadata.toolCalls ?? []).map((call) =>
    `[calls ${inline(call.name)} ${JSON.stringify(call.params)}]`
  )
  const text = [message.content, ...calls].filter((part) => part.length > 0).join(" ")
  return `${speaker(message)}: ${indented(text)}`
}

/**
 * A time as the labels of a context show it: `09:12 UTC`, or with its date (`dated`),
 * `2026-03-14 09:12 UTC`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const timeLabel = (time: DateTime.Utc, options: { readonly dated: boolean }): string => {
  const clock = `${DateTime.formatIso(time).slice(11, 16)} UTC`
  return options.dated ? `${datePart(time)} ${clock}` : clock
}

/**
 * Whether two times fall on different UTC dates. A context whose first and last messages do shows
 * dates in its labels.
 *
 * @since 0.1.0
 * @category rendering
 */
export const onDifferentDays = (a: DateTime.Utc, b: DateTime.Utc): boolean => datePart(a) !== datePart(b)
