/**
 * The summarizer's input text: the existing summary and the new turns, in the sections every
 * summarize skill reads (DESIGN §3), and how a skill reads them back. A `SkillService` of your own
 * receives its `text` in this form.
 *
 * @since 0.1.0
 */
import type { Message } from "./Message.js"
import type { Turn } from "./Turn.js"

const speaker = (message: Message): string => {
  switch (message.role) {
    case "user":
      return "User"
    case "assistant":
      return message.metadata.modelVariant === undefined ? "Assistant" : `Assistant (${message.metadata.modelVariant})`
    case "tool":
      return message.metadata.toolName === undefined ? "Tool" : `Tool (${message.metadata.toolName})`
    case "system":
      return "System"
    case "summary":
      return "Summary"
  }
}

/**
 * One message as a line of a turn: `User: …`, `Assistant (mini): …`, tool calls in brackets.
 *
 * @since 0.1.0
 * @category rendering
 */
export const messageLine = (message: Message): string => {
  const calls = (message.metadata.toolCalls ?? []).map((call) => `[calls ${call.name} ${JSON.stringify(call.params)}]`)
  const text = [message.content, ...calls].filter((part) => part.length > 0).join(" ")
  return `${speaker(message)}: ${text}`
}

/**
 * The input of a summarize call:
 *
 *     === EXISTING_SUMMARY ===
 *     <summary, or NONE>
 *     === END_EXISTING_SUMMARY ===
 *
 *     === NEW_TURNS ===
 *     Turn 1:
 *     User: …
 *     Assistant: …
 *     === END_NEW_TURNS ===
 *
 * @since 0.1.0
 * @category rendering
 */
export const summaryInput = (existing: string | null, turns: ReadonlyArray<Turn>): string => {
  const summary = existing === null || existing.trim().length === 0 ? "NONE" : existing
  const body = turns.map((turn, i) => [`Turn ${i + 1}:`, ...turn.messages.map(messageLine)].join("\n"))
  return [
    "=== EXISTING_SUMMARY ===",
    summary,
    "=== END_EXISTING_SUMMARY ===",
    "",
    "=== NEW_TURNS ===",
    ...body,
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
}

const section = (text: string, name: string): string | null => {
  const open = `=== ${name} ===\n`
  const start = text.indexOf(open)
  if (start < 0) return null
  const end = text.indexOf(`=== END_${name} ===`, start + open.length)
  if (end < 0) return null
  const body = text.slice(start + open.length, end)
  return body.endsWith("\n") ? body.slice(0, -1) : body
}

/**
 * Reads a summarize input back; text without the sections is taken as new turns alone.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseSummaryInput = (text: string): ParsedInput => {
  const existing = section(text, "EXISTING_SUMMARY")
  const newTurns = section(text, "NEW_TURNS")
  return {
    existing: existing === null || existing === "NONE" ? null : existing,
    newTurns: newTurns ?? (existing === null ? text : "")
  }
}
