/**
 * What a statement carries that a later question may ask for word for word: identifiers, amounts,
 * dates and times, phone numbers, e-mail, addresses, quantities with their unit, and names. They
 * are found by shape, in any domain.
 */
import { Array as Arr, Order } from "effect"
import { calendarWords, functionWords, openers } from "./words.js"

/** The kinds of salient spans, from the most to the least specific. */
export type Kind =
  | "email"
  | "phone"
  | "money"
  | "identifier"
  | "code"
  | "address"
  | "date"
  | "time"
  | "quantity"
  | "name"

/** A salient span of a text: its kind, its text as written, and where it starts. */
export interface Span {
  readonly kind: Kind
  readonly text: string
  readonly index: number
}

const months = "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|" +
  "Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
const weekdays = "(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
const day = `${months}\\.? \\d{1,2}(?!\\d)(?:st|nd|rd|th)?(?:,? \\d{4})?`
/** A date written day first: "29 May", "19 Jun 2026", "3rd of June". */
const dayFirst = `\\d{1,2}(?:st|nd|rd|th)?(?: of)? ${months}\\b\\.?(?:,? \\d{4})?`
const numberWords =
  "(?:[Oo]ne|[Tt]wo|[Tt]hree|[Ff]our|[Ff]ive|[Ss]ix|[Ss]even|[Ee]ight|[Nn]ine|[Tt]en|[Ee]leven|[Tt]welve)"
const identifierBody = "(?=[A-Za-z0-9-]*\\d)(?=[A-Za-z0-9-]*[A-Z])[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+"

/** The patterns, in order of precedence: a span found by an earlier one is not found again. */
const patterns: ReadonlyArray<readonly [Kind, RegExp]> = [
  ["email", /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g],
  // "(555) 014-7790", "555-014-7790", "+44 20 7946 0588", "(020) 7946 0588". Also a national
  // number that opens with its trunk 0, in groups: "07700 900461", "020 7946 0588".
  [
    "phone",
    /\(\d{3}\)\s?\d{3}-\d{4}|\(\d{2,5}\)\s?\d{3,4}[\s-]\d{3,4}\b|\b\d{3}[-.]\d{3}[-.]\d{4}\b|\+\d[\d ()-]{7,}\d|\b0\d{3,4} \d{6}\b|\b0\d{2,3} \d{3,4} \d{4}\b/g
  ],
  ["money", /[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|K|million|billion)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP)\b/g],
  // A count of items named by an identifier: "four PF-290M", "2 x AB-12".
  // Not the tail of another code: "R-290 PF-290" counts nothing.
  ["quantity", new RegExp(`(?<![\\w-])(?:${numberWords}|\\d+)(?: x)? ${identifierBody}\\b`, "g")],
  // A timestamp is a date, not an identifier: "2024-04-25T07:20:00-04:00".
  ["date", /\b\d{4}-\d{2}-\d{2}(?:T\d{2}(?::\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g],
  // A machine's address on a network: "203.0.113.58".
  ["address", /\b(?:\d{1,3}\.){3}\d{1,3}\b/g],
  ["identifier", new RegExp(`\\b${identifierBody}\\b|#\\d{3,}\\b`, "g")],
  // A street address ("1475 Tannery Road"), or a region and postal code ("OH 44218").
  [
    "address",
    /\b\d{1,6} (?:\p{Lu}[\p{Ll}'’-]+ ){1,3}(?:Road|Rd|Street|St|Avenue|Ave|Way|Drive|Dr|Lane|Ln|Boulevard|Blvd|Court|Ct|Parkway|Pkwy|Place|Pl|Highway|Hwy|Square|Sq|Terrace|Circle|Trail|Pike)\b\.?|\b[A-Z]{2} \d{5}(?:-\d{4})?\b/gu
  ],
  [
    "date",
    new RegExp(
      `\\b(?:${weekdays},? )?${day}(?:\\s?(?:through|to|until|-|–)\\s?(?:${day}|\\d{1,2}(?:,? \\d{4})?))?` +
        `|\\b(?:${weekdays},? )?${dayFirst}|\\b${months} \\d{4}\\b` +
        `|\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b${weekdays}s?(?: and ${weekdays}s?)?\\b`,
      "g"
    )
  ],
  ["time", /\b\d{1,2}(?::\d{2})?\s?(?:a\.m\.|p\.m\.|am\b|pm\b)|\b\d{1,2}:\d{2}\b/gi],
  // A numbered place or box: "Unit 4B", "Flat 12", "mailbox number 217", "locker #38".
  [
    "name",
    /\b\p{Lu}\p{Ll}+ \d{1,4}\p{Lu}(?![\p{L}\p{N}-])|\b\p{L}{3,} (?:number|no\.|#) ?\d[\dA-Z]{0,5}(?![\p{L}\p{N}-])/gu
  ],
  // A number joined to its unit: "10-day", "20-minute", "30-person".
  ["quantity", /\b\d+(?:\.\d+)?-[a-z]+\b/g],
  // A number with its unit or the word it counts: "18,000 square feet", "30 days". A comma
  // only between digits: "Dock 4, before" holds no quantity.
  [
    "quantity",
    /\b\d(?:[\d,]*\d)?(?:\.\d+)?\s?(?:%|percent\b|(?:square|cubic|linear|metric) [a-z]+|(?!(?:and|or|of|the|to|in|on|at|for|is|are|was|with|by)\b)[A-Za-z]{2,}\b)/g
  ],
  // Two or three capitalized words ("Graham Okonjo", "Bramble & Thyme"), or one with a number
  // or a letter ("Dock 2", "Building C").
  [
    "name",
    /\b\p{Lu}[\p{Ll}'’-]+(?:(?: &)? \p{Lu}[\p{Ll}'’-]+){1,2}\b|\b\p{Lu}[\p{Ll}]+ (?:\d{1,4}|\p{Lu})(?![\p{L}\p{N}-])/gu
  ],
  // A one-word name inside a sentence, after a lower-case word, a number or a comma ("her dog
  // Pixel"). It must not open a name of several words.
  ["name", /(?<=[\p{Ll}\p{N},;] )\p{Lu}\p{Ll}{2,}\b(?![ '’-]\p{Lu})/gu]
]

/**
 * An identifier of one record holds four digits or more in a row ("TCK-70815", "#4471"). A shorter
 * one names a kind of thing, like a model or a room ("PF-290M", "G-04"), and is a code.
 */
const recordLike = /\d{4}|#\d{3}/

/** Words that open sentences or name calendar things. A capitalized pair starting with one is not a name. */
const notNames = new Set([...functionWords, ...calendarWords, ...openers])

/** A name, whole: two or three capitalized words, or one with a number or a letter. */
const wholeName = /^\p{Lu}[\p{Ll}'’-]+(?:(?: &)? \p{Lu}[\p{Ll}'’-]+){1,2}$|^\p{Lu}[\p{Ll}]+ (?:\d{1,4}|\p{Lu})$/u

/** A word with a contraction's ending: "It's", "We're", "That'll". */
const contraction = /^\p{L}+['’](?:s|re|ll|ve|d|m|t)$/u

const byIndex = Order.mapInput(Order.number, (span: Span) => span.index)

/** The salient spans of `text`, in order, none overlapping another. */
export const spans = (text: string): Array<Span> => {
  const found: Array<Span> = []
  const taken = (start: number, end: number) => found.some((s) => start < s.index + s.text.length && s.index < end)
  for (const [kind, pattern] of patterns) {
    for (const match of text.matchAll(pattern)) {
      let raw = match[0].trim()
      let index = match.index + match[0].indexOf(raw)
      if (kind === "name") {
        // "Thanks Graham Okonjo": what follows an opener or a contraction may still be a name.
        const first = raw.split(" ")[0] ?? ""
        if (notNames.has(first.toLowerCase()) || contraction.test(first)) {
          const rest = raw.slice(first.length).trimStart()
          if (!wholeName.test(rest)) continue
          index += raw.length - rest.length
          raw = rest
        }
      }
      if (raw.length < 2 || taken(index, index + raw.length)) continue
      if (kind === "quantity" && /^\d{1,2} (?:am|pm)$/i.test(raw)) continue
      // A year before a noun ("the 2026 quote") says which one, not how many.
      if (kind === "quantity" && /^(?:19|20)\d{2} \p{L}/u.test(raw)) continue
      // Punctuation after a span is the sentence's, except the period of "a.m." and "p.m.".
      const text = /[ap]\.m\.$/i.test(raw) ? raw : raw.replace(/[.,;:]+$/, "")
      found.push({ kind: kind === "identifier" && !recordLike.test(text) ? "code" : kind, text, index })
    }
  }
  return Arr.sort(found, byIndex)
}

/** A name of one word ("Pixel"): worth less than a name of several or a value. */
export const nameAlone = (span: Span): boolean => span.kind === "name" && !/\s/.test(span.text)

/** A span as a comparable key: case and spacing do not make two spans different. */
export const normalize = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim()

/**
 * How much a kind of span is worth keeping. An identifier is worth most, then an amount, an address
 * or a contact, then a date. A time, a quantity, a code or a name is worth least.
 */
export const weight: Record<Kind, number> = {
  email: 4,
  phone: 4,
  money: 4,
  identifier: 5,
  code: 2,
  address: 4,
  date: 3,
  time: 2,
  quantity: 2,
  name: 2
}
