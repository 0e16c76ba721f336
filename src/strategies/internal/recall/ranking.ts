/**
 * How recall ranks the turns its search finds beyond the store's lexical score, on every store.
 * - A question asking when prefers turns that state a date or a time.
 * - A turn that leaves its matter to the next one brings that next turn.
 * - The frame of a question about the conversation ("when did I tell you") is not searched for.
 * - A turn that holds the query's words side by side weighs more than one that holds them apart.
 */
import { searchableText } from "../../../domain/internal/recall.js"
import type { Message } from "../../../domain/Message.js"
import type { Turn } from "../../../domain/Turn.js"

/** A dated turn's score, for a question asking when, is multiplied by `1 + dateBoost`. */
export const dateBoost = 0.5

/** A neighbour's score: that of the turn it follows, times this. */
export const neighbourWeight = 0.7

/** The most words of a user message that opens a turn barely ("car shopping report"). */
export const bareWords = 6

/**
 * A question asking when something happens or happened, in any clause: `When was…`, `On what
 * date…`, `…, and when did…`. Not `When did I tell you…`: that date is the turn's own.
 */
const whenPattern =
  /(?:^|[,;]\s*(?:and\s+)?)(?:until |by |since |at |on |from )?(?:when|what (?:date|day|time)|which (?:date|day))\b(?!\s+did\s+(?:i|we)\b)/iu

/** Whether `query` asks when. */
export const asksWhen = (query: string): boolean => whenPattern.test(query.trim())

const months = "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" +
  "oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"

/**
 * A date or a time of day as a conversation writes it: `2026-05-28`, `28/05/2026`, `June 20`,
 * `19 February`, `10:05`, `7 p.m.`, a weekday.
 */
const datePattern = new RegExp(
  [
    String.raw`\b\d{4}-\d{2}-\d{2}\b`,
    String.raw`\b\d{1,2}/\d{1,2}/\d{2,4}\b`,
    String.raw`\b(?:${months})\.?\s+\d{1,2}(?:st|nd|rd|th)?\b`,
    String.raw`\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:${months})\b`,
    String.raw`\b\d{1,2}:\d{2}\b`,
    String.raw`\b\d{1,2}\s*[ap]\.?m\b`,
    String.raw`\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b`
  ].join("|"),
  "iu"
)

/** Whether a turn states a date or a time. */
export const statesDate = (turn: Turn): boolean => turn.messages.some((message) => datePattern.test(message.content))

const wordCount = (text: string): number => {
  const trimmed = text.trim()
  return trimmed.length === 0 ? 0 : trimmed.split(/\s+/u).length
}

const userMessage = (turn: Turn): Message | undefined => turn.messages.find((message) => message.role === "user")

/**
 * Whether a turn leaves its matter to the next one. The assistant speaks last, and either ends on
 * a question or answers a bare opening ("car shopping report").
 */
export const asks = (turn: Turn): boolean => {
  const last = turn.messages[turn.messages.length - 1]
  if (last === undefined || last.role !== "assistant") return false
  const user = userMessage(turn)
  return /\?\s*$/u.test(last.content) || (user !== undefined && wordCount(user.content) <= bareWords)
}

/**
 * The frame of a question about the conversation itself ("did I mention", "did I report back
 * on"). Those words would match every turn where someone tells or mentions something.
 */
const framePattern =
  /\b(?:did|have|had)\s+(?:i|we)\s+(?:first\s+|ever\s+|last\s+)?(?:tell|told|mention(?:ed)?|say|said|bring\s+up|brought\s+up|report(?:ed)?(?:\s+back)?|talk(?:ed)?)\b(?:\s+(?:to\s+)?you)?(?:\s+(?:about|on|that))?/giu

/** `query` without the frame of a question about the conversation itself. */
export const withoutFrame = (query: string): string => query.replace(framePattern, " ")

/**
 * How much the query's word pairs, held side by side, grow a turn's score. The score is
 * multiplied by `1 + phraseWeight * share`, where `share` is `phraseShare`.
 */
export const phraseWeight = 0.5

/** The share of the query's word pairs (`wordPairs`) that a turn's messages hold as written. */
export const phraseShare = (turn: Turn, asked: ReadonlyArray<string>): number => {
  if (asked.length === 0) return 0
  const texts = turn.messages.map((message) => searchableText(message).normalize("NFKC").toLowerCase())
  let held = 0
  for (const pair of asked) if (texts.some((text) => text.includes(pair))) held += 1
  return held / asked.length
}
