/**
 * The lexical search every store shares, so that memory and SQL find a message by the same words.
 * It holds what text is searched, its terms, the bounds and the BM25 weights.
 */
import type { Role } from "../../../domain/Message.js"

/** How a text is cut into terms, and their bounds. */
export {
  documentTerms,
  maxIndexedBytes,
  maxQueryTerms,
  maxTermFrequency,
  maxTermLength,
  queryTerms
} from "../../../domain/internal/searchTerms.js"

/** BM25's term-frequency saturation. */
export const k1 = 1.2

/** BM25's document-length normalization. */
export const b = 0.75

/** The most hits one search returns. */
export const maxLimit = 100

/** The hits a search returns for the `limit` asked: at least one, at most `maxLimit`. */
export const clampLimit = (limit: number): number =>
  Number.isNaN(limit) ? 1 : Math.max(1, Math.min(maxLimit, Math.floor(limit)))

/** How many messages of a term the SQL stores count at most: a term held by more is common. */
export const frequencyCap = 1000

/** How many messages of the rarest terms a search ranks at most (see `plan`). */
export const candidateBudget = 250

/** How many of the newest messages that hold a common term are ranked besides. */
export const recentCandidates = 100

/** How far back, in seqs from the newest, those messages are looked for. */
export const recentWindow = 2000

/**
 * How many of a user's newest messages a user-scoped search looks through for those messages.
 * The conversations said last are searched first, each within `recentWindow` of its newest. In all,
 * `recentCandidates` are ranked: as many as in one conversation, however many the user has.
 */
export const recentSpan = 500

/** What a message is found by (the same text hybrid recall embeds). */
export { searchableText } from "../../../domain/internal/recall.js"

/** Whether a message can be a hit: not a summary, not one of the leading system messages. */
export const isSearchable = (message: { readonly seq: number; readonly role: Role }, systemPrefixSeq: number) =>
  message.role !== "summary" && message.seq > systemPrefixSeq

/** BM25's inverse document frequency of a term held by `df` of `documents` messages. */
export const idf = (df: number, documents: number): number =>
  Math.log(1 + Math.max(0, documents - df + 0.5) / (df + 0.5))

/** A term's BM25 weight in a message that holds it `tf` times and has `length` distinct terms. */
export const bm25 = (weight: number, tf: number, length: number, average: number): number =>
  weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / Math.max(1, average)))

/**
 * How a query's terms are searched, given how many messages hold each.
 *
 * - The rarest terms are `rare` while they hold at most `candidateBudget` messages together. Every
 *   message that holds one is ranked.
 * - A message that holds only the other terms is ranked when it is among the `recentCandidates`
 *   newest that do.
 *
 * So a search ranks at most `candidateBudget + recentCandidates` messages, however long the
 * conversation. A term held by hundreds of messages weighs little (its idf is low), so recency
 * ranks the messages that hold only such terms.
 */
export const plan = (
  frequencies: ReadonlyArray<number>,
  documents: number
): ReadonlyArray<{ readonly rare: boolean; readonly idf: number }> => {
  const order = frequencies.map((df, i) => ({ df, i })).sort((x, y) => x.df - y.df || x.i - y.i)
  const rare = new Set<number>()
  let reach = 0
  for (const { df, i } of order) {
    reach += df
    if (reach <= candidateBudget) rare.add(i)
  }
  return frequencies.map((df, i) => ({ rare: rare.has(i), idf: idf(df, documents) }))
}
