/**
 * Keeping a summary within its cap without cutting a sentence in half: a summary over the cap is
 * cut at the last sentence boundary that fits (the end of a sentence or a line), and only at a
 * word when no boundary lies in the second half of what fits.
 */
import { Effect } from "effect"
import type { TokenCounter } from "../../../services/TokenCounter.js"

/** A summary within the cap, and whether it had to be cut to get there. */
export interface Capped {
  readonly text: string
  readonly truncated: boolean
}

/** Where a sentence or a line ends: after `.`, `!`, `?` or `…` (closing quotes and brackets kept), or at a line break. */
const boundary = /[.!?…]["'”’)\]]*(?=\s)|\n/g

/**
 * The longest prefix of `fitting` that ends a sentence or a line, if one ends in its second half;
 * else the prefix that ends a word, if one does; else `fitting` itself.
 */
export const sentencePrefix = (fitting: string): string => {
  let end = -1
  for (const match of fitting.matchAll(boundary)) {
    const at = match.index + match[0].length
    if (at >= fitting.length / 2) end = at
  }
  if (end > 0) return fitting.slice(0, end).trimEnd()
  const space = fitting.search(/\s\S*$/)
  return (space > 0 ? fitting.slice(0, space) : fitting).trimEnd()
}

/**
 * `text` within `maxTokens`: unchanged when it fits, else cut at a sentence boundary by
 * `sentencePrefix` of the longest prefix that fits.
 */
export const capAtSentence = (
  counter: TokenCounter.Service,
  text: string,
  maxTokens: number
): Effect.Effect<Capped> =>
  Effect.gen(function*() {
    const trimmed = text.trim()
    const fitting = yield* counter.truncate(trimmed, maxTokens)
    if (fitting.length >= trimmed.length) return { text: trimmed, truncated: false }
    const cut = sentencePrefix(fitting)
    // A shorter text may still take more tokens (tokens merge differently at its end).
    const fits = cut.length > 0 && (yield* counter.count(cut)) <= maxTokens
    return { text: fits ? cut : fitting.trimEnd(), truncated: true }
  })
