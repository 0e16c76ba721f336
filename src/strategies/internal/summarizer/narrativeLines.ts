/**
 * A narrative as lines, for the hierarchical strategy's `append` fold. The fold reads the latest
 * lines again, and keeps the earlier ones as written. When room is short, the plain lines of the
 * older half leave first, then the oldest. A date heading (`[YYYY-MM-DD]`) dates the lines under
 * it. Each line keeps its heading, and a heading with no line under it is left out.
 */
import { Array as Arr, Effect, Option } from "effect"
import { headingDate } from "../../../domain/internal/transcript.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"

const isHeading = (line: string): boolean => headingDate(line) !== undefined

/** The non-blank lines of a narrative. */
const linesOf = (narrative: string): ReadonlyArray<string> =>
  narrative.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim().length > 0)

/** The lines but those at `gone`, each under its heading. No heading is left bare. */
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
  /** The latest lines within the tokens asked, and at least one if there is any. */
  readonly latest: string
}

/**
 * The latest lines of `narrative` within `maxTokens`, at least its last, under their heading;
 * and the lines before them.
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
 * The order the lines at `said` leave in when room is short. First the older half's lines without
 * a number, then the rest, each oldest first. What must stay exact outlasts the prose around it.
 * No line outlives the newer half for carrying a number alone.
 */
const leavingOrder = (lines: ReadonlyArray<string>, said: ReadonlyArray<number>): ReadonlyArray<number> => {
  const plain = said.slice(0, Math.floor(said.length / 2)).filter((i) => !/\p{N}/u.test(lines[i] ?? ""))
  const first = new Set(plain)
  return [...plain, ...said.filter((i) => !first.has(i))]
}

/** `kept` then `fresh`. A heading `fresh` opens with, and `kept` ends under, is written once. */
const joined = (kept: ReadonlyArray<string>, fresh: ReadonlyArray<string>): string => {
  const opening = fresh[0]
  const under = Arr.findLast(kept, isHeading)
  const tail = opening !== undefined && Option.isSome(under) && opening.trim() === under.value.trim()
    ? fresh.slice(1)
    : fresh
  return [...kept, ...tail].join("\n")
}

/**
 * `earlier` then `written`, within `maxTokens` as one text. `written` is already capped, and kept
 * whole. Lines of `earlier` leave in `leavingOrder` until the text fits.
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
