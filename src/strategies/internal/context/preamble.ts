/**
 * The preamble of a summarizing strategy: the summary state's facts and running summary, counted
 * as the messages that carry them. The summary is truncated on demand.
 */
import { Effect } from "effect"
import type { Fact } from "../../../domain/Fact.js"
import { factsText, summaryText } from "../../../domain/internal/contextText.js"
import { headingDate } from "../../../domain/internal/transcript.js"
import type { SummaryState } from "../../../domain/SummaryState.js"
import type { Turn } from "../../../domain/Turn.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import type { Preamble } from "./window.js"

/** A line of the summary long enough for a turn shown to stand for it: 4 words or more. */
const longEnough = /\S+\s+\S+\s+\S+\s+\S/

/** A speaker the offline skill opens a line with (`User: `). */
const speaker = /^(?:User|Assistant|Tool)(?: \([^)]*\))?: /

/**
 * The preamble of a state, and how to shrink it by truncating the summary. Facts are protected
 * like the leading system messages: kept whole even when they alone pass the limit.
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
        // Truncate the text, then check the rendered message, as tokens may merge at the cut.
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

/**
 * A preamble without what the shown turns already hold. A fact goes when all its source messages
 * are among them. A summary line of 4 words or more goes when one of their messages says it as
 * written, speaker aside; the offline skill's lines often are. What they hold stays in the turns.
 */
export const withoutShown = (
  counter: TokenCounter.Service,
  preamble: Preamble,
  turns: ReadonlyArray<Turn>
): Effect.Effect<Preamble> =>
  Effect.gen(function*() {
    const seqs = new Set<number>()
    for (const turn of turns) for (const message of turn.messages) seqs.add(message.seq)
    const facts = preamble.facts.filter((fact) =>
      fact.sourceSeqs === undefined || fact.sourceSeqs.length === 0 || fact.sourceSeqs.some((seq) => !seqs.has(seq))
    )
    const lines = preamble.summary?.split("\n") ?? []
    const kept = lines.filter((line) => {
      const text = line.replace(speaker, "").trim()
      if (!longEnough.test(text)) return true
      for (const turn of turns) {
        for (const message of turn.messages) if (message.content.includes(text)) return false
      }
      return true
    })
    if (facts.length === preamble.facts.length && kept.length === lines.length) return preamble
    // The lines kept, as written. A date heading goes when the next non-blank line is another
    // heading, or none. Only blank lines and headings make no summary.
    const dated = kept.filter((line, i) => {
      if (headingDate(line) === undefined) return true
      const next = kept.slice(i + 1).find((after) => after.trim().length > 0)
      return next !== undefined && headingDate(next) === undefined
    })
    const summary = dated.some((line) => line.trim().length > 0 && headingDate(line) === undefined)
      ? dated.join("\n")
      : null
    const factTokens = facts.length === 0 ? 0 : yield* counter.countMessage({ content: factsText(facts) })
    const summaryTokens = summary === null ? 0 : yield* counter.countMessage({ content: summaryText(summary) })
    return { ...preamble, facts, summary, tokens: factTokens + summaryTokens }
  })
