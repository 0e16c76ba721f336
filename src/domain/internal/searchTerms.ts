/**
 * The terms of the lexical search: how a text is cut into terms, the stop words and the bounds.
 * Every store and recall's ranking share them, so a message is found by the same words in memory
 * and in SQL.
 *
 * @since 0.1.0
 */
import { stemmer as porter } from "stemmer"
import { MaxQueryLength } from "./recall.js"
import { leadingCodePoints, utf8Length } from "./utf8.js"

/** The most distinct terms a query is searched by. Identifier-like terms are kept first. */
export const maxQueryTerms = 32

/** The longest term, in code points. A longer word is cut to it, in documents and queries alike. */
export const maxTermLength = 64

/** How often one term of a message is counted at most (BM25 saturates long before). */
export const maxTermFrequency = 32

/**
 * How much of a message is indexed, in bytes of a PostgreSQL `tsvector`. Each term costs its
 * UTF-8 bytes plus `termOverhead`, and 2 bytes per further occurrence. It is far below the 1 MB a
 * `tsvector` may hold. A message past it is indexed by its first terms.
 */
export const maxIndexedBytes = 512 * 1024

/** A term's `tsvector` bytes besides its own: scope prefix (12), entry, count, position, padding. */
const termOverhead = 24

/**
 * The stop words of PostgreSQL's `english` configuration (Snowball's list). They are left out of
 * documents and queries, so a question's grammar never matches.
 */
const stopWords: ReadonlySet<string> = new Set(
  ("i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers " +
    "herself it its itself they them their theirs themselves what which who whom this that these those am is are " +
    "was were be been being have has had having do does did doing a an the and but if or because as until while of " +
    "at by for with about against between into through during before after above below to from up down in out on " +
    "off over under again further then once here there when where why how all any both each few more most other " +
    "some such no nor not only own same so than too very s t can will just don should now")
    .split(" ")
)

/**
 * A word, or words joined by single connectors: `ORD-2024-88417`, `1,240.00`, `2026-04-18`,
 * `jane.doe@example.com`, `10:30`, `SKU_991`. Everything else separates: spaces, quotes,
 * brackets, currency signs, query operators.
 */
const chunkPattern = /[\p{L}\p{N}\p{M}]+(?:[-_.,/:@#+][\p{L}\p{N}\p{M}]+)*/gu

const connectorPattern = /[-_.,/:@#+]/

const digitsOnly = /^\p{Nd}+$/u

const asciiLetters = /^[a-z]+$/

/** Cuts a term to `maxTermLength` code points (never inside a surrogate pair). */
const bounded = (term: string): string => leadingCodePoints(term, maxTermLength)

/**
 * The Porter stemmer (`stemmer`), on plain English words only: "refunds" meets "refund", "booked"
 * meets "booking". Identifiers and numbers are never stemmed. Stored SQL vectors hold stemmed
 * terms, so changing the stemmer needs a migration that rewrites them (as `9_stem_search` does).
 */
const stem = (word: string): string => word.length < 3 || !asciiLetters.test(word) ? word : porter(word)

/** One word as a term: none for a stop word. */
const wordTerm = (word: string): string | undefined => stopWords.has(word) ? undefined : bounded(stem(word))

/**
 * The terms of one chunk. A single word is itself, stemmed when it is plain English. A compound
 * is kept whole and split: `ord-2024-88417`, `ord`, `2024`, `88417`. A number with grouping or
 * decimal separators is kept whole, with its digits, and with its units when it ends in two
 * decimals: `1,240.00` gives `1,240.00`, `124000` and `1240`. So `$1,240.00`, `1240.00` and
 * `1.240,00` meet. Its groups alone mean nothing and are left out.
 */
const chunkTerms = (chunk: string, emit: (term: string, identifier: boolean) => void): void => {
  if (!connectorPattern.test(chunk)) {
    const term = wordTerm(chunk)
    if (term !== undefined) emit(term, digitsOnly.test(chunk))
    return
  }
  emit(bounded(chunk), true)
  const parts = chunk.split(connectorPattern)
  const numeric = parts.every((part) => digitsOnly.test(part))
  if (numeric && /^[\p{Nd}.,]+$/u.test(chunk)) {
    emit(bounded(parts.join("")), true)
    const last = parts[parts.length - 1]
    if (parts.length >= 2 && last !== undefined && last.length === 2) emit(bounded(parts.slice(0, -1).join("")), true)
    return
  }
  for (const part of parts) {
    const term = wordTerm(part)
    if (term !== undefined) emit(term, /\p{N}/u.test(part))
  }
}

/** Calls `emit` with every term of `text`, in order, with whether it looks like an identifier. */
const scan = (text: string, emit: (term: string, identifier: boolean) => void): void => {
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(chunkPattern)) chunkTerms(match[0], emit)
}

/**
 * The terms of a document in order of first occurrence, each with how often it occurs (at most
 * `maxTermFrequency`). Bounded by `maxIndexedBytes`.
 */
export const documentTerms = (text: string): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>()
  let bytes = 0
  let full = false
  scan(text, (term) => {
    const count = counts.get(term)
    if (count !== undefined) {
      if (count < maxTermFrequency) {
        counts.set(term, count + 1)
        bytes += 2
      }
      return
    }
    if (full) return
    const size = utf8Length(term) + termOverhead
    if (bytes + size > maxIndexedBytes) {
      full = true
      return
    }
    counts.set(term, 1)
    bytes += size
  })
  return counts
}

/**
 * The distinct terms a query is searched by, at most `maxQueryTerms`. Identifier-like terms
 * (numbers, compounds) come first, then the others in order. None for stop words or punctuation.
 */
export const queryTerms = (text: string): ReadonlyArray<string> => {
  const identifiers: Array<string> = []
  const words: Array<string> = []
  const seen = new Set<string>()
  scan(text.slice(0, MaxQueryLength), (term, identifier) => {
    if (seen.has(term)) return
    seen.add(term)
    ;(identifier ? identifiers : words).push(term)
  })
  return [...identifiers, ...words].slice(0, maxQueryTerms)
}

/**
 * The pairs of adjacent words in a query, neither a stop word, in lower case. "what did the boiler
 * repair cost" holds `boiler repair` and `repair cost`.
 */
export const wordPairs = (text: string): ReadonlyArray<string> => {
  const words = text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}\p{M}]+(?:['’-][\p{L}\p{N}\p{M}]+)*/gu) ?? []
  const pairs = new Set<string>()
  for (let i = 1; i < words.length; i++) {
    const first = words[i - 1]
    const second = words[i]
    if (first === undefined || second === undefined || stopWords.has(first) || stopWords.has(second)) continue
    pairs.add(`${first} ${second}`)
  }
  return [...pairs]
}
