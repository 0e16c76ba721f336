/**
 * The summarizer's input text: the existing summary and the new turns, in the sections every
 * summarize skill reads (DESIGN §3), and how a skill reads them back. A `SkillService` of your own
 * receives its `text` in this form.
 *
 * @since 0.1.0
 */
import type { Message } from "./Message.js"
import type { Turn } from "./Turn.js"

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

/** A line that reads as the input's own structure: a section marker, a turn header or a speaker. */
const structural = /^\s*(===|Turn \d+:|(User|Assistant|Tool|System|Summary)( \(.*\))?:)/

/**
 * The existing summary, which a model wrote (possibly steered by a user): any of its lines that
 * would read as a marker, a turn or a speaker is indented, so it stays the summary's text.
 */
const escapeSummary = (summary: string): string =>
  summary.split(lineBreak).map((line) => structural.test(line) ? `  ${line}` : line).join("\n")

const speaker = (message: Message): string => {
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
export const messageLine = (message: Message): string => {
  const calls = (message.metadata.toolCalls ?? []).map((call) =>
    `[calls ${inline(call.name)} ${JSON.stringify(call.params)}]`
  )
  const text = [message.content, ...calls].filter((part) => part.length > 0).join(" ")
  return `${speaker(message)}: ${indented(text)}`
}

/**
 * The version of the input format: a skill id names the prompt version it ran, and a prompt
 * describes this format, so a change here bumps the prompts' versions too. Version 2 separates
 * the turns with a blank line.
 *
 * @since 0.1.0
 * @category constants
 */
export const formatVersion = 2

/**
 * The input of a summarize call, one blank line between two turns:
 *
 *     === EXISTING_SUMMARY ===
 *     <summary, or NONE>
 *     === END_EXISTING_SUMMARY ===
 *
 *     === NEW_TURNS ===
 *     Turn 1:
 *     User: …
 *     Assistant: …
 *
 *     Turn 2:
 *     User: …
 *     === END_NEW_TURNS ===
 *
 * The markers, `Turn n:` and the speakers start lines; what the conversation and the existing
 * summary say cannot (see `messageLine`), so neither can forge a section or a turn. No line of a
 * message is empty (its further lines are indented), so an empty line only ever separates turns.
 *
 * @since 0.1.0
 * @category rendering
 */
export const summaryInput = (existing: string | null, turns: ReadonlyArray<Turn>): string => {
  const summary = existing === null || existing.trim().length === 0 ? "NONE" : escapeSummary(existing)
  const body = turns.map((turn, i) => [`Turn ${i + 1}:`, ...turn.messages.map(messageLine)].join("\n"))
  return [
    "=== EXISTING_SUMMARY ===",
    summary,
    "=== END_EXISTING_SUMMARY ===",
    "",
    "=== NEW_TURNS ===",
    ...(body.length === 0 ? [] : [body.join("\n\n")]),
    "=== END_NEW_TURNS ==="
  ].join("\n")
}

/**
 * The sections of a summarize input, as a skill reads them back.
 *
 * @since 0.1.0
 * @category models
 */
export interface ParsedInput {
  /** The existing summary, or null for NONE. */
  readonly existing: string | null
  /** The text of the NEW_TURNS section (its lines, without the section markers). */
  readonly newTurns: string
  /**
   * The turns of NEW_TURNS, oldest first: the lines of each turn's messages, without its
   * `Turn n:` header and the blank line that separates it from the next.
   */
  readonly turns: ReadonlyArray<string>
}

/** The body of a section: between its markers, each alone on a line of its own. */
const section = (text: string, name: string): string | null => {
  const lines = text.split("\n")
  const start = lines.indexOf(`=== ${name} ===`)
  if (start < 0) return null
  const end = lines.indexOf(`=== END_${name} ===`, start + 1)
  if (end < 0) return null
  return lines.slice(start + 1, end).join("\n")
}

const turnHeader = /^Turn \d+:$/

/**
 * The turns of a NEW_TURNS text: a `Turn n:` line opens one (a header cannot be forged: a
 * message's further lines are indented), and empty lines only separate them. Lines before the
 * first header (text written without headers) are a turn of their own.
 */
const splitTurns = (newTurns: string): Array<string> => {
  const turns: Array<Array<string>> = []
  let current: Array<string> | undefined
  for (const line of newTurns.split("\n")) {
    if (turnHeader.test(line)) {
      current = []
      turns.push(current)
    } else if (line.length > 0) {
      if (current === undefined) {
        current = []
        turns.push(current)
      }
      current.push(line)
    }
  }
  return turns.map((lines) => lines.join("\n"))
}

/**
 * Reads a summarize input back: the existing summary, the NEW_TURNS text and its turns. Inputs
 * of the first format (turns not separated by a blank line) read the same. Text without the
 * sections is taken as new turns alone.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseSummaryInput = (text: string): ParsedInput => {
  const existing = section(text, "EXISTING_SUMMARY")
  const body = section(text, "NEW_TURNS")
  const newTurns = body ?? (existing === null ? text : "")
  return {
    existing: existing === null || existing === "NONE" ? null : existing,
    newTurns,
    turns: splitTurns(newTurns)
  }
}
