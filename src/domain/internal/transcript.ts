/**
 * A message as text for a model: one line per message of a turn (`messageLine`), and the time
 * labels of a conversation's contexts (`timeLabel`, `onDifferentDays`).
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
export const datePart = (time: DateTime.Utc): string => DateTime.formatIso(time).slice(0, 10)

/**
 * The line that dates the summary lines after it, `[2026-03-14]`: a summary written from turns said
 * on several days keeps the day each line was said on.
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

// Every line break a text may hold: a record's content must not start a line of the input.
const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g

/** A label on one line: line breaks and other control characters become spaces. */
const inline = (label: string): string => label.replace(/[\p{Cc}\u2028\u2029]+/gu, " ")

/**
 * Text that cannot forge the input's structure. The structure (section markers, `Turn n:`, the
 * speaker of each message) lives at the start of lines; a message's content continues on lines
 * indented by two spaces, so nothing a user, a tool or a model wrote can open a line as a marker,
 * a turn or a speaker.
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
 * content's further lines are indented by two spaces: they can never read as another message.
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
 * Whether two times fall on different days (their dates in UTC differ): the labels of a context
 * whose first and last messages do so show dates.
 *
 * @since 0.1.0
 * @category rendering
 */
export const onDifferentDays = (a: DateTime.Utc, b: DateTime.Utc): boolean => datePart(a) !== datePart(b)
