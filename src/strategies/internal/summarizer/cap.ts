/**
 * Keeping a summary within its cap without cutting a sentence in half. A summary over the cap is
 * cut at the last end of a sentence or line that fits. It is cut at a word only when no such end
 * lies in the second half of what fits.
 */
import { Effect } from "effect"
import type { TokenCounter } from "../../../services/TokenCounter.js"

/** A summary within the cap, and whether it had to be cut to get there. */
export interface Capped {
  readonly text: string
  readonly truncated: boolean
}

/** Where a sentence or line ends: after `.`, `!`, `?` or `…` and any closing quotes, or at a line break. */
const boundary = /[.!?…]["'”’)\]]*(?=\s)|\n/g

/**
 * The longest prefix of `fitting` that ends a sentence or line in its second half. Else the
 * longest that ends a word, else `fitting` itself.
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

/** `text` within `maxTokens`: unchanged when it fits, else cut by `sentencePrefix`. */
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
    // A shorter text may take more tokens, as tokens merge differently at its end.
    const fits = cut.length > 0 && (yield* counter.count(cut)) <= maxTokens
    return { text: fits ? cut : fitting.trimEnd(), truncated: true }
  })
