/**
 * The offline narrative: the statements that keep the most of the conversation, within the cap.
 * A statement is worth what it adds: salient spans no kept statement holds, and the user's goals,
 * conditions and decisions. An amount said three times is kept once, in its newest statement.
 * Kept statements are written in the order they were said.
 */
import { Effect } from "effect"
import { type Fact } from "../../../../domain/Fact.js"
import { factsText } from "../../../../domain/internal/contextText.js"
import { lastOfEachCategory } from "../../../../domain/internal/facts.js"
import { dateHeading } from "../../../../domain/internal/transcript.js"
import type { TokenCounter } from "../../../../services/TokenCounter.js"
import { goalKey } from "./eviction.js"
import { nameAlone, normalize, spans, weight } from "./salient.js"
import type { Intent, Statement } from "./statements.js"

const intentWorth: Record<Intent, number> = { goal: 4, condition: 3, decision: 3, none: 0 }

/** Small talk, greetings and thanks: never worth a line. */
const filler =
  /^(?:hi|hello|hey|thanks|thank you|great|perfect|sounds good|ok(?:ay)?|sure|you're welcome|no problem|have a (?:good|great|nice))\b/i

/** A date with a clock time in ISO form, as a system stamps a record. */
const timestamp = /^\d{4}-\d{2}-\d{2}T/

/**
 * What a statement adds to what `covered` holds. A one-word name (`nameAlone`) adds only with
 * `namesAlone`. When the facts carry the exact values, a line may spend its room on who and where.
 * A summary that carries them alone keeps its room for them.
 */
const gain = (statement: Statement, covered: ReadonlySet<string>, namesAlone: boolean): number => {
  let worth = 0
  const seen = new Set<string>()
  for (const span of statement.spans) {
    const key = normalize(span.text)
    if (covered.has(key) || seen.has(key) || (!namesAlone && nameAlone(span))) continue
    seen.add(key)
    // A weekday or a clock time says little without its date. A machine's timestamp dates a
    // record, not what was agreed. A one-word name may be anyone's.
    worth += /^\p{L}+days?$/u.test(span.text) || span.kind === "time" || timestamp.test(span.text) ||
        nameAlone(span)
      ? 1
      : weight[span.kind]
  }
  if (worth === 0 && statement.intent === "none") return 0
  const said = statement.speaker === "User" ? 1 : 0
  const total = worth + intentWorth[statement.intent] + said
  // A tool result's field or a question is worth less than a statement. The assistant's words,
  // or the answer, usually state what matters of it.
  return statement.field !== undefined || statement.text.endsWith("?") ? total / 2 : total
}

/** How much the newest statement is preferred to the oldest of equal worth, linearly between. */
const recency = 0.01

/** The least a line is taken to cost. A fragment ("Saturday?") is not worth more for being short. */
const minCost = 12

/**
 * The greedy choice both selections make: the best worth per token first, the newer of two equals,
 * while `fits` allows. Each pick takes its spans off the others' worth. `held` starts with the
 * spans kept elsewhere and grows with each pick. `taken` were chosen before.
 */
const choose = (
  candidates: ReadonlyArray<Statement>,
  namesAlone: boolean,
  held: Set<string>,
  costOf: (i: number) => number,
  fits: (i: number, cost: number) => boolean,
  picked: (i: number, cost: number) => void,
  taken: ReadonlySet<number> = new Set()
): Set<number> => {
  const last = Math.max(1, ...candidates.map((s) => s.order))
  const chosen = new Set(taken)
  while (true) {
    let best = -1
    let bestRatio = 0
    let bestCost = 0
    for (const [i, s] of candidates.entries()) {
      if (chosen.has(i)) continue
      const cost = costOf(i)
      if (!fits(i, cost)) continue
      const worth = gain(s, held, namesAlone)
      if (worth === 0) continue
      // Newer statements get a slight edge: what is current beats what was said first.
      const ratio = (worth / Math.max(cost, minCost)) * (1 + recency * (s.order / last))
      if (ratio > bestRatio) {
        best = i
        bestRatio = ratio
        bestCost = cost
      }
    }
    const pick = candidates[best]
    if (pick === undefined) return chosen
    chosen.add(best)
    picked(best, bestCost)
    for (const span of pick.spans) held.add(normalize(span.text))
  }
}

/** The statements worth a line: small talk only when it carries a span. */
const worthALine = (statements: ReadonlyArray<Statement>): Array<Statement> =>
  statements.filter((s) => !filler.test(s.text) || s.spans.length > 0)

/** What `select` keeps clear of, whether it dates its lines, and whether a one-word name adds. */
export interface SelectOptions {
  readonly covered?: ReadonlySet<string> | undefined
  readonly dated: boolean
  readonly namesAlone: boolean
}

/**
 * Picks the statements to keep within `maxTokens`. `options.covered` holds spans the facts
 * keep, which add nothing here. With `options.dated` (`prompts.readsSeveralDays`), each line goes
 * under its day's heading (`dateHeading`), which the day's first line pays for.
 */
export const select = (
  counter: TokenCounter.Service,
  statements: ReadonlyArray<Statement>,
  maxTokens: number,
  options: SelectOptions
): Effect.Effect<string> =>
  Effect.gen(function*() {
    const candidates = worthALine(statements)
    // Each line costs its tokens and the line break that joins it.
    const costs = yield* Effect.forEach(candidates, (s) => Effect.map(counter.count(s.line), (n) => n + 1))
    const headed = options.dated
    const headingCosts = new Map<string, number>()
    if (headed) {
      for (const day of new Set(candidates.flatMap((s) => s.date === undefined ? [] : [s.date]))) {
        headingCosts.set(day, (yield* counter.count(dateHeading(day))) + 1)
      }
    }
    const daysChosen = new Set<string>()
    const costOf = (i: number): number => {
      const date = candidates[i]?.date
      const heading = date === undefined || daysChosen.has(date) ? 0 : headingCosts.get(date) ?? 0
      return (costs[i] ?? 1) + heading
    }
    let used = 0
    const chosen = choose(candidates, options.namesAlone, new Set(options.covered), costOf, (_, cost) =>
      used + cost <= maxTokens, (i, cost) => {
      used += cost
      const date = candidates[i]?.date
      if (date !== undefined) {
        daysChosen.add(date)
      }
    })
    // A statement said twice, as an assistant repeating the user, is written once.
    const lines: Array<string> = []
    const written = new Set<string>()
    let day: string | undefined
    for (const [i, s] of candidates.entries()) {
      if (!chosen.has(i) || written.has(s.line)) {
        continue
      }
      if (headed && s.date !== undefined && s.date !== day) {
        lines.push(dateHeading(s.date))
      }
      day = s.date ?? day
      written.add(s.line)
      lines.push(s.line)
    }
    return lines.join("\n")
  })

/** A fact as a line of the facts block, for `choose` to weigh against the narrative's lines. */
const factStatement = (fact: Fact, order: number): Statement => ({
  line: `- ${fact.key}: ${fact.value}`,
  text: fact.value,
  speaker: "",
  order,
  spans: spans(fact.value),
  intent: fact.category === "DECISION"
    ? "decision"
    : fact.category === "CONDITION"
    ? "condition"
    : fact.key.startsWith(goalKey)
    ? "goal"
    : "none",
  existing: true
})

/**
 * The facts worth their room when they share `limits.shared` tokens with the narrative. The facts
 * take at most `limits.facts`, counted as their block is shown. The newest fact of each category
 * but `GENERAL` stays, so a name, a date or a condition always has its place. Beyond those, facts
 * and statements are chosen together (`choose`). A fact is `carried` when it carries more per
 * token than the lines that say the same. Room left once nothing adds goes to the other facts,
 * newest first, as `spare`: facts the narrative may say too. Each list keeps the facts' order.
 */
export const factsWorthTheirRoom = <F extends Fact>(
  counter: TokenCounter.Service,
  facts: ReadonlyArray<F>,
  statements: ReadonlyArray<Statement>,
  limits: { readonly shared: number; readonly facts: number }
): Effect.Effect<{ readonly carried: Array<F>; readonly spare: Array<F> }> =>
  Effect.gen(function*() {
    if (facts.length === 0) return { carried: [], spare: [] }
    const lines = worthALine(statements)
    const lastOrder = Math.max(0, ...lines.map((s) => s.order))
    const candidates = [...facts.map((fact) => factStatement(fact, lastOrder)), ...lines]
    const costs = yield* Effect.forEach(candidates, (s) => Effect.map(counter.count(s.line), (n) => n + 1))
    // The first fact pays for the block: its heading and a message's overhead.
    const block = yield* counter.countMessage({ content: factsText([]) })
    const isFact = (i: number) => i < facts.length
    let used = 0
    let factTokens = 0
    const costOf = (i: number) => (costs[i] ?? 1) + (isFact(i) && factTokens === 0 ? block : 0)
    const fits = (i: number, cost: number) =>
      used + cost <= limits.shared && (!isFact(i) || factTokens + cost <= limits.facts)
    const take = (i: number, cost: number) => {
      used += cost
      if (isFact(i)) factTokens += cost
    }
    const held = new Set<string>()
    const newest = lastOfEachCategory(facts)
    const newestOfKind = new Set<number>()
    for (let i = facts.length - 1; i >= 0; i--) {
      const fact = facts[i]
      if (fact === undefined || !newest.has(fact)) continue
      const cost = costOf(i)
      if (!fits(i, cost)) continue
      newestOfKind.add(i)
      take(i, cost)
      for (const span of candidates[i]?.spans ?? []) held.add(normalize(span.text))
    }
    const chosen = choose(candidates, true, held, costOf, fits, take, newestOfKind)
    const spare = new Set<number>()
    for (let i = facts.length - 1; i >= 0; i--) {
      if (chosen.has(i)) continue
      const cost = costOf(i)
      if (!fits(i, cost)) continue
      spare.add(i)
      take(i, cost)
    }
    return { carried: facts.filter((_, i) => chosen.has(i)), spare: facts.filter((_, i) => spare.has(i)) }
  })
