/**
 * The offline narrative: the statements that keep the most of what the conversation carries,
 * within the cap. A statement is worth what it adds: the salient spans no statement kept so far
 * holds (an amount said three times is kept once, in its newest statement), and the user's goals,
 * conditions and decisions. Kept statements are written in the order they were said.
 */
import { Effect } from "effect"
import { dateHeading } from "../../../../domain/MessageText.js"
import type { TokenCounter } from "../../../../services/TokenCounter.js"
import { normalize, weight } from "./salient.js"
import type { Intent, Statement } from "./statements.js"

const intentWorth: Record<Intent, number> = { goal: 4, condition: 3, decision: 3, none: 0 }

/** Small talk, greetings and thanks: never worth a line. */
const filler =
  /^(?:hi|hello|hey|thanks|thank you|great|perfect|sounds good|ok(?:ay)?|sure|you're welcome|no problem|have a (?:good|great|nice))\b/i

/** A date with a clock time in ISO form: what a system stamps on a record. */
const timestamp = /^\d{4}-\d{2}-\d{2}T/

/** What a statement adds to what `covered` holds. */
const gain = (statement: Statement, covered: ReadonlySet<string>): number => {
  let worth = 0
  const seen = new Set<string>()
  for (const span of statement.spans) {
    const key = normalize(span.text)
    if (covered.has(key) || seen.has(key)) continue
    seen.add(key)
    // A weekday or a clock time alone says little without the date it belongs to; a machine's
    // timestamp ("as of 2024-03-25T15:42:00Z") dates a record, not what was agreed.
    worth += /^\p{L}+days?$/u.test(span.text) || span.kind === "time" || timestamp.test(span.text)
      ? 1
      : weight[span.kind]
  }
  if (worth === 0 && statement.intent === "none") return 0
  const said = statement.speaker === "User" ? 1 : 0
  const total = worth + intentWorth[statement.intent] + said
  // A field of a tool's result (the assistant's own words usually state what matters of it), or a
  // question (its answer states it): worth less than a statement.
  return statement.field !== undefined || statement.text.endsWith("?") ? total / 2 : total
}

/** How much the newest statement is preferred to the oldest of equal worth (linearly between). */
const recency = 0.01

/** The least a line is taken to cost: a fragment ("Saturday?") is not worth more for being short. */
const minCost = 12

/**
 * Picks the statements to keep within `maxTokens`: the best worth per token first (the newer of
 * two equals), each pick taking the spans it holds off the others' worth. `covered` holds spans
 * kept elsewhere (the facts), which add nothing here.
 */
export const select = (
  counter: TokenCounter.Service,
  statements: ReadonlyArray<Statement>,
  maxTokens: number,
  covered: ReadonlySet<string> = new Set()
): Effect.Effect<string> =>
  Effect.gen(function*() {
    const candidates = statements.filter((s) => !filler.test(s.text) || s.spans.length > 0)
    // Each line costs its tokens and the line break that joins it.
    const costs = yield* Effect.forEach(candidates, (s) => Effect.map(counter.count(s.line), (n) => n + 1))
    // Lines said on more than one day are written under the heading of their day: the first line of
    // a day costs its heading too.
    const days = new Set(candidates.flatMap((s) => s.date === undefined ? [] : [s.date]))
    const headed = days.size > 1 || candidates.some((s) => s.existing && s.date !== undefined)
    const headingCosts = new Map<string, number>()
    if (headed) {
      for (const day of days) headingCosts.set(day, (yield* counter.count(dateHeading(day))) + 1)
    }
    const daysChosen = new Set<string>()
    const costOf = (i: number): number => {
      const date = candidates[i]?.date
      const heading = date === undefined || daysChosen.has(date) ? 0 : headingCosts.get(date) ?? 0
      return (costs[i] ?? 1) + heading
    }
    const held = new Set(covered)
    const last = Math.max(1, ...candidates.map((s) => s.order))
    const chosen = new Set<number>()
    let used = 0
    while (true) {
      let best = -1
      let bestRatio = 0
      for (const [i, s] of candidates.entries()) {
        const cost = costOf(i)
        if (chosen.has(i) || used + cost > maxTokens) continue
        const worth = gain(s, held)
        if (worth === 0) continue
        // Newer statements get a slight edge: what is current beats what was said first.
        const ratio = (worth / Math.max(cost, minCost)) * (1 + recency * (s.order / last))
        if (ratio > bestRatio) {
          best = i
          bestRatio = ratio
        }
      }
      const picked = candidates[best]
      if (picked === undefined) break
      used += costOf(best)
      chosen.add(best)
      if (picked.date !== undefined) daysChosen.add(picked.date)
      for (const span of picked.spans) held.add(normalize(span.text))
    }
    // The same statement said twice (an assistant repeating the user) is written once.
    const lines: Array<string> = []
    const written = new Set<string>()
    let day: string | undefined
    for (const [i, s] of candidates.entries()) {
      if (!chosen.has(i) || written.has(s.line)) continue
      if (headed && s.date !== undefined && s.date !== day) lines.push(dateHeading(s.date))
      day = s.date ?? day
      written.add(s.line)
      lines.push(s.line)
    }
    return lines.join("\n")
  })
