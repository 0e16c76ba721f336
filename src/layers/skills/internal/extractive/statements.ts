/**
 * The existing summary and the new turns of a skill call as statements. A statement is a short
 * unit of text with its speaker, its place in the turns, its salient spans, and its intent: a
 * goal, a condition or a decision. The turns are read as stored, message by message. Tool results
 * stored as JSON become "field value" statements: their data is kept, their JSON never quoted.
 */
import { Option, Predicate } from "effect"
import { datePart, headingDate } from "../../../../domain/internal/transcript.js"
import type { Message, Role } from "../../../../domain/Message.js"
import { type Reading, summaryParts } from "../prompts.js"
import { type Span, spans } from "./salient.js"

/** What a statement says, beyond the spans it carries. */
export type Intent = "goal" | "condition" | "decision" | "none"

/** A statement of the new turns, or a line of the existing summary. */
export interface Statement {
  /** The text as it goes into a summary: `User: …` for the user's words, others' as they are. */
  readonly line: string
  /** The text without its speaker. */
  readonly text: string
  readonly speaker: string
  /** Order in the input: the existing summary's lines first, then the new turns'. */
  readonly order: number
  readonly spans: ReadonlyArray<Span>
  readonly intent: Intent
  /** Whether it comes from the existing summary. */
  readonly existing: boolean
  /** For a field of a tool's JSON result: the field's name, as words. */
  readonly field?: string | undefined
  /** The seq of the message it was said in; none for a line of the existing summary. */
  readonly seq?: number | undefined
  /** The day it was said on (`2026-03-14`), from its message or the heading above its line. */
  readonly date?: string | undefined
}

const goal =
  /\b(?:our|my|the) (?:goal|priority|aim|objective|deadline|target)\b|\bI (?:want|need|'d like|would like)\b|\bwe (?:want|need|must|have to|'d like|would like)\b|\bhard deadline\b|\bhas to be\b/i
export const condition =
  /\bas long as\b|\bprovided (?:that )?\b|\bonly if\b|\bon (?:the )?condition\b|\bunless\b|\bsubject to\b|\bwithin \d+ days?\b|\bno later than\b|\bnot before\b|\bmust\b/i
/**
 * A decision: what was chosen, agreed, confirmed or changed ("at 8:00 p.m. instead of 7:30 p.m.").
 * A request to confirm ("please confirm") is not one.
 */
const decision =
  /\b(?:we(?:'ll| will)? go with|decided|agreed|approved?|we(?:'ll| will) take|(?<!please )confirm(?:ed)?\b(?!\?)|chose|going with|instead)\b/i

/** A question in other words: "I want to know how much…", "she's asking whether…". */
const asks = /\b(?:(?:want|need|like|wanted) to (?:know|check|ask)|wondering|asking|whether)\b/i

/** The fewest words of a goal, condition or decision: "Agreed." alone says not what was agreed. */
const minIntentWords = 4

/**
 * A question or a list's opening line asks or announces: it states no goal, condition or decision.
 * Nor does a reply too short to say what it is about.
 */
const intentOf = (text: string): Intent =>
  /[?:]$/.test(text.trim()) || asks.test(text) || text.trim().split(/\s+/).length < minIntentWords
    ? "none"
    : goal.test(text)
    ? "goal"
    : condition.test(text)
    ? "condition"
    : decision.test(text)
    ? "decision"
    : "none"

/** `poNumber` → `po number`, `ship_to` → `ship to`. */
export const fieldWords = (name: string): string =>
  name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_\-.]+/g, " ").toLowerCase().trim()

// Every line break a text may hold: each ends a line alike.
const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g

const speakers: Record<Role, string> = {
  user: "User",
  assistant: "Assistant",
  tool: "Tool",
  system: "System",
  summary: "Summary"
}

/** A message as the statements read it: its speaker, the tool's name if a tool spoke, its content. */
interface Said {
  readonly speaker: string
  readonly tool: string | undefined
  readonly content: string
}

/**
 * A stored message as said: its content's lines with one kind of line break, and the tool's name
 * on one line. Its tool calls are left out, as the tool's answer covers them.
 */
const saidOf = (message: Message): Said => ({
  speaker: speakers[message.role],
  tool: message.role === "tool" && message.metadata.toolName !== undefined
    ? message.metadata.toolName.replace(/[\p{Cc}\u2028\u2029]+/gu, " ")
    : undefined,
  content: message.content.replace(lineBreak, "\n")
})

const parseJson = (text: string): Option.Option<unknown> => {
  const trimmed = text.trim()
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return Option.none()
  try {
    return Option.some(JSON.parse(trimmed))
  } catch {
    return Option.none()
  }
}

/** The scalar fields of a JSON value, each with the name of its nearest field. */
const scalars = (value: unknown, field: string, out: Array<readonly [string, string]>): void => {
  if (Array.isArray(value)) {
    for (const item of value) scalars(item, field, out)
  } else if (Predicate.isRecord(value)) {
    for (const [key, item] of Object.entries(value)) scalars(item, key, out)
  } else if (typeof value === "string" || typeof value === "number") {
    const text = String(value).trim()
    if (text.length > 0 && text.length <= 160) out.push([field, text])
  }
}

/** Sentences of prose: split after `.`, `!` or `?`, at line breaks and at list bullets. */
const sentences = (text: string): Array<string> =>
  text
    // Not after a title or an abbreviation: "the Garden Suite for Dr. Anand Mehta" is one sentence.
    .split(
      /\n+|(?<=[.!?])(?<!\b(?:Dr|Mr|Mrs|Ms|Prof|St|No|Jr|Sr|vs|Inc|Ltd|Co)\.)\s+(?=[\p{Lu}\d("'“$])|\s+-\s+(?=\p{Lu})/u
    )
    .map((s) => s.replace(/^[-*•\d.)\s]+(?=\p{L})/u, "").trim())
    .filter((s) => s.length > 0)

/** The most words a statement keeps. A longer sentence keeps the clauses that carry something. */
const maxWords = 16

/** A long sentence shortened to its first clause and those with spans or an intent. */
const shorten = (sentence: string): string => {
  if (sentence.split(/\s+/).length <= maxWords) return sentence
  const clauses = clausesOf(sentence)
  const kept = clauses.filter((clause, i) => i === 0 || spans(clause).length > 0 || intentOf(clause) !== "none")
  // At most twice the words, never ending inside a span ("October 20," without its year).
  const text = kept.join(" ")
  const words = [...text.matchAll(/\S+/g)]
  const cut = words[maxWords * 2]?.index
  if (cut === undefined) return text
  const across = spans(text).find((span) => span.index < cut && cut < span.index + span.text.length)
  return text.slice(0, across === undefined ? cut : across.index + across.text.length).trim()
}

/** A sentence's clauses: split after `,`, `;` or `:`, or before a dash, never inside a span. */
export const clausesOf = (sentence: string): Array<string> => {
  const inside = spans(sentence).map((span) => [span.index, span.index + span.text.length] as const)
  const clauses: Array<string> = []
  let start = 0
  for (const match of sentence.matchAll(/(?<=[,;:])\s+|\s+(?=—|–)/g)) {
    if (inside.some(([from, to]) => from < match.index && match.index < to)) continue
    clauses.push(sentence.slice(start, match.index))
    start = match.index + match[0].length
  }
  clauses.push(sentence.slice(start))
  return clauses.filter((clause) => clause.length > 0)
}

const statement = (
  speaker: string,
  text: string,
  order: number,
  existing: boolean,
  field?: string,
  /** The sentence `text` was shortened from: a question's mark is at its end. */
  whole: string = text,
  seq?: number,
  date?: string
): Statement => ({
  // The user's words are marked as theirs; what the assistant and the tools said is the record.
  line: existing ? text : speaker === "User" ? `User: ${text}` : field !== undefined ? `${speaker}: ${text}` : text,
  text,
  speaker,
  order,
  spans: spans(text),
  intent: intentOf(whole) === "none" ? "none" : intentOf(text),
  existing,
  field,
  seq,
  date
})

/**
 * The statements of a skill call: the existing summary's lines as they are, then the new turns'
 * sentences and tool fields, in order.
 */
export const statementsOf = (
  input: Reading
): { readonly existing: Array<Statement>; readonly fresh: Array<Statement> } => {
  const existing: Array<Statement> = []
  // A date heading dates the lines after it; it is not a statement itself.
  let dated: string | undefined
  for (const part of summaryParts(input.existingSummary)) {
    for (const raw of part.split(lineBreak)) {
      const line = raw.trim()
      if (line.length === 0) continue
      const heading = headingDate(line)
      if (heading !== undefined) {
        dated = heading
        continue
      }
      // A tool's field kept by an earlier summary ("lookup_order: ship to …") is still a field.
      const tool = /^([a-z][A-Za-z0-9_.-]*): (.*)$/.exec(line)
      const i = existing.length
      existing.push(
        tool === null
          ? statement(speakerOf(line), line, i, true, undefined, line, undefined, dated)
          : statement(tool[1] ?? "", line, i, true, fieldWords(tool[2] ?? ""), line, undefined, dated)
      )
    }
  }
  const fresh: Array<Statement> = []
  let order = existing.length
  for (const turn of input.turns) {
    for (const message of turn.messages) {
      const said = saidOf(message)
      const date = datePart(message.createdAt)
      // Content stored as JSON (a tool's structured result) is read as the data it is.
      const json = parseJson(message.content)
      if (Option.isSome(json)) {
        const fields: Array<readonly [string, string]> = []
        scalars(json.value, "value", fields)
        const tool = said.tool ?? "tool"
        // One statement per field that carries something: `check_order: ship to 1475 …`.
        for (const [field, text] of fields) {
          const words = fieldWords(field)
          if (spans(text).length === 0 && !/\s/.test(text)) continue
          fresh.push(statement(tool, `${words} ${text}`, order++, false, words, undefined, message.seq, date))
        }
        continue
      }
      const speaker = said.speaker === "Tool" ? (said.tool ?? "Tool") : said.speaker
      for (const sentence of sentences(said.content)) {
        fresh.push(statement(speaker, shorten(sentence), order++, false, undefined, sentence, message.seq, date))
      }
    }
  }
  return { existing, fresh }
}

const speakerOf = (line: string): string => /^([\w ()-]{1,40}): /.exec(line)?.[1] ?? ""
