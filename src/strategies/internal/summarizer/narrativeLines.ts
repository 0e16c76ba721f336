/**
 * A narrative as lines, for the hierarchical strategy's `append` fold: its latest lines (read
 * again by the fold) and its earlier ones (kept as written; when the room is short, the plain
 * lines of the older half leave first, then the oldest). A date heading (`[YYYY-MM-DD]`,
 * `dateHeading`) dates the lines under it: whatever part of the narrative is taken,
 * each line keeps the heading it was under, and a heading with no line under it is left out.
 */
import { Array as Arr, Effect, Option } from "effect"
import { headingDate } from "../../../domain/internal/transcript.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"

const isHeading = (line: string): boolean => headingDate(line) !== undefined

/** The lines of a narrative that say something (blank lines are left out). */
const linesOf = (narrative: string): ReadonlyArray<string> =>
  narrative.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim().length > 0)

/** The lines but those at `gone`, each under the heading it was under: no heading is left bare. */
const without = (lines: ReadonlyArray<string>, gone: ReadonlySet<number>): Array<string> => {
  const kept: Array<string> = []
  let heading: string | undefined
  let shown: string | undefined
  for (const [i, line] of lines.entries()) {
    if (isHeading(line)) heading = line
    else if (!gone.has(i)) {
      if (heading !== undefined && heading !== shown) kept.push(heading)
      shown = heading
      kept.push(line)
    }
  }
  return kept
}

/** A narrative cut into the lines a fold reads again and those it keeps as they are. */
export interface Parts {
  /** The earlier lines, kept as written. */
  readonly earlier: ReadonlyArray<string>
  /** The latest lines, at least one when there is any, within the tokens asked where they fit. */
  readonly latest: string
}

/**
 * The latest lines of `narrative` within `maxTokens` (at least its last line), under the heading
 * they were under, and the lines before them.
 */
export const split = (
  counter: TokenCounter.Service,
  narrative: string,
  maxTokens: number
): Effect.Effect<Parts> =>
  Effect.gen(function*() {
    const lines = linesOf(narrative)
    let start = lines.length
    let used = 0
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i] ?? ""
      // A heading goes with the lines under it (`without`).
      if (isHeading(line)) continue
      const tokens = (yield* counter.count(line)) + 1
      if (start < lines.length && used + tokens > maxTokens) break
      used += tokens
      start = i
    }
    return {
      earlier: without(lines.slice(0, start), new Set()),
      latest: without(lines, new Set(Array.from({ length: start }, (_, i) => i))).join("\n")
    }
  })

/**
 * The order the lines at `said` leave in when the room is short: in the older half, those that
 * carry no number (an identifier, an amount, a date, a time) first, oldest first; then the rest,
 * oldest first. What must stay exact outlasts the prose around it, and no line outlives the newer
 * half of the narrative for carrying a number alone.
 */
const leavingOrder = (lines: ReadonlyArray<string>, said: ReadonlyArray<number>): ReadonlyArray<number> => {
  const plain = said.slice(0, Math.floor(said.length / 2)).filter((i) => !/\p{N}/u.test(lines[i] ?? ""))
  const first = new Set(plain)
  return [...plain, ...said.filter((i) => !first.has(i))]
}

/** `kept` and then `fresh`, a heading that `fresh` opens with and that `kept` ends under written once. */
const joined = (kept: ReadonlyArray<string>, fresh: ReadonlyArray<string>): string => {
  const opening = fresh[0]
  const under = Arr.findLast(kept, isHeading)
  const tail = opening !== undefined && Option.isSome(under) && opening.trim() === under.value.trim()
    ? fresh.slice(1)
    : fresh
  return [...kept, ...tail].join("\n")
}

/**
 * `earlier` and then `written`, within `maxTokens` as one text: `written` is kept whole (it is
 * capped before), and the lines of `earlier` leave in `leavingOrder` until the text fits, each line
 * kept under the heading it was under.
 */
export const join = (
  counter: TokenCounter.Service,
  earlier: ReadonlyArray<string>,
  written: string,
  maxTokens: number
): Effect.Effect<string> =>
  Effect.gen(function*() {
    const fresh = linesOf(written)
    const said = [...earlier.keys()].filter((i) => !isHeading(earlier[i] ?? ""))
    const gone = new Set<number>()
    for (const next of leavingOrder(earlier, said)) {
      const text = joined(without(earlier, gone), fresh)
      if ((yield* counter.count(text)) <= maxTokens) return text
      gone.add(next)
    }
    return fresh.join("\n")
  })

/** The lines of `lines` that `join` keeps within `maxTokens` with nothing written after them. */
export const within = (
  counter: TokenCounter.Service,
  lines: ReadonlyArray<string>,
  maxTokens: number
): Effect.Effect<ReadonlyArray<string>> => Effect.map(join(counter, lines, "", maxTokens), linesOf)
