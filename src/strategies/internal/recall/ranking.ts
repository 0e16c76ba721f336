/**
 * How recall ranks the turns its search finds, beyond the store's lexical score, the same whatever
 * the store: a question asking when prefers the turns that state a date or a time; a turn that
 * leaves its matter to the next one (it ends on the assistant's question, or opens with a few
 * words) brings that next turn; and the frame of a question about the conversation itself ("when
 * did I tell you") is not searched for; and a turn that holds the query's words side by side, as
 * the query says them, weighs more than one that holds them apart.
 */
import { searchableText } from "../../../domain/internal/recall.js"
import type { Message } from "../../../domain/Message.js"
import type { Turn } from "../../../domain/Turn.js"

/** How much a dated turn's score grows for a question asking when: its score times `1 + dateBoost`. */
export const dateBoost = 0.5

/** A neighbour's score: that of the turn it follows, times this. */
export const neighbourWeight = 0.7

/** The most words of a user message that opens a turn barely ("car shopping report"). */
export const bareWords = 6

/**
 * A question asking when something happens or happened, in any clause: `When was…`, `Until when…`,
 * `On what date…`, `…, and when did…`. Not one about when the user did or said something (`When
 * did I tell you…`): that date is the turn's own, whatever its words.
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
 * Whether a turn leaves its matter to the next one: the assistant answers last, and either ends on
 * a question ("Which ones did you get?") or answers a bare opening ("car shopping report").
 */
export const asks = (turn: Turn): boolean => {
  const last = turn.messages[turn.messages.length - 1]
  if (last === undefined || last.role !== "assistant") return false
  const user = userMessage(turn)
  return /\?\s*$/u.test(last.content) || (user !== undefined && wordCount(user.content) <= bareWords)
}

/**
 * The frame of a question about the conversation itself ("when did I tell you", "did I mention",
 * "when did I first bring up", "did I report back on"): words of the asking, not of what was said,
 * that would match every turn where someone tells or mentions something.
 */
const framePattern =
  /\b(?:did|have|had)\s+(?:i|we)\s+(?:first\s+|ever\s+|last\s+)?(?:tell|told|mention(?:ed)?|say|said|bring\s+up|brought\s+up|report(?:ed)?(?:\s+back)?|talk(?:ed)?)\b(?:\s+(?:to\s+)?you)?(?:\s+(?:about|on|that))?/giu

/** `query` without the frame of a question about the conversation itself. */
export const withoutFrame = (query: string): string => query.replace(framePattern, " ")

/**
 * How much a turn's score grows by the query's pairs of words it holds side by side: its score
 * times `1 + phraseWeight * share`, `share` being those pairs' part of the query's pairs.
 */
export const phraseWeight = 0.5

/** The share of the query's pairs of words (`wordPairs`) that a turn's messages hold as written. */
export const phraseShare = (turn: Turn, asked: ReadonlyArray<string>): number => {
  if (asked.length === 0) return 0
  const texts = turn.messages.map((message) => searchableText(message).normalize("NFKC").toLowerCase())
  let held = 0
  for (const pair of asked) if (texts.some((text) => text.includes(pair))) held += 1
  return held / asked.length
}
