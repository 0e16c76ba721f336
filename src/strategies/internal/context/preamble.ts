/**
 * The preamble of a summarizing strategy: the facts and the running summary of the summary state,
 * counted as the system messages that carry them, and the summary truncated on demand.
 */
import { Effect } from "effect"
import type { Fact } from "../../../domain/Fact.js"
import { factsText, summaryText } from "../../../domain/MemoryContext.js"
import type { SummaryState } from "../../../domain/SummaryState.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import type { Preamble } from "./window.js"

/**
 * The preamble of a state, and how to shrink it by truncating the summary. Facts are protected,
 * as the leading system messages are: kept whole even when they alone pass the limit.
 */
export const summaryPreamble = (
  counter: TokenCounter.Service,
  state: SummaryState,
  options: { readonly facts: ReadonlyArray<Fact> }
) =>
  Effect.gen(function*() {
    const { facts } = options
    const factTokens = facts.length === 0 ? 0 : yield* counter.countMessage({ content: factsText(facts) })
    const narrative = state.narrative
    const summaryTokens = narrative.length === 0 ? 0 : yield* counter.countMessage({ content: summaryText(narrative) })
    const preamble: Preamble = {
      facts,
      summary: narrative.length === 0 ? null : narrative,
      tokens: factTokens + summaryTokens,
      summaryTruncated: false,
      summarizedUpTo: state.cursor
    }
    const shrink = (maxTokens: number): Effect.Effect<Preamble> =>
      Effect.gen(function*() {
        const room = maxTokens - factTokens
        const withoutSummary: Preamble = { ...preamble, summary: null, tokens: factTokens, summaryTruncated: true }
        if (narrative.length === 0 || room <= 0) return narrative.length === 0 ? preamble : withoutSummary
        // Truncate the text, then check the rendered message (token boundaries may merge).
        let target = room - (yield* counter.countMessage({ content: summaryText("") }))
        for (let attempt = 0; attempt < 4 && target > 0; attempt++) {
          const text = (yield* counter.truncate(narrative, target)).trimEnd()
          if (text.length === 0) break
          const tokens = yield* counter.countMessage({ content: summaryText(text) })
          if (tokens <= room) {
            return { ...preamble, summary: text, tokens: factTokens + tokens, summaryTruncated: true }
          }
          target -= tokens - room
        }
        return withoutSummary
      })
    const withoutSummary: Preamble = { ...preamble, summary: null, tokens: factTokens }
    return { preamble, shrink, withoutSummary }
  })
