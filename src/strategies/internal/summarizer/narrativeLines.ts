/**
 * A narrative as lines, for the hierarchical strategy's `append` fold: its latest lines (read
 * again by the fold) and its earlier ones (kept as written, the oldest leaving first when the room
 * is short). A date heading (`[YYYY-MM-DD]`, `MessageText.dateHeading`) dates the lines under it:
 * whatever part of the narrative is taken, its first line keeps the heading it was under, and a
 * heading with no line under it is left out.
 */
import { Array as Arr, Effect, Option } from "effect"
import { headingDate } from "../../../domain/MessageText.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"

const isHeading = (line: string): boolean => headingDate(line) !== undefined

/** The lines of a narrative that say something (blank lines are left out). */
const linesOf = (narrative: string): ReadonlyArray<string> =>
  narrative.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim().length > 0)

/** The lines from `from` on, under the heading the first of them was under. */
const from = (lines: ReadonlyArray<string>, start: number): ReadonlyArray<string> => {
  const rest = lines.slice(start)
  const first = rest[0]
  if (first === undefined || isHeading(first)) return rest
  return Option.match(Arr.findLast(lines.slice(0, start), isHeading), {
    onNone: () => rest,
    onSome: (heading) => [heading, ...rest]
  })
}

/** The lines without a heading that has no line under it. */
const withoutBareHeadings = (lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.filter((line, i) => {
    if (!isHeading(line)) return true
    const next = lines[i + 1]
    return next !== undefined && !isHeading(next)
  })

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
      // A heading goes with the lines under it.
      if (isHeading(line)) {
        if (start === i + 1) start = i
        continue
      }
      const tokens = (yield* counter.count(line)) + 1
      if (start < lines.length && used + tokens > maxTokens) break
      used += tokens
      start = i
    }
    return {
      earlier: withoutBareHeadings(lines.slice(0, start)),
      latest: from(lines, start).join("\n")
    }
  })

/**
 * `earlier` and then `written`, within `maxTokens` as one text: the oldest of `earlier` leave
 * first; `written` is kept whole (it is capped before). A heading that `written` opens with and
 * that `earlier` ends under is written once.
 */
export const join = (
  counter: TokenCounter.Service,
  earlier: ReadonlyArray<string>,
  written: string,
  maxTokens: number
): Effect.Effect<string> =>
  Effect.gen(function*() {
    const fresh = linesOf(written)
    for (let start = 0; start < earlier.length; start++) {
      const kept = withoutBareHeadings(from(earlier, start))
      const opening = fresh[0]
      const under = Arr.findLast(kept, isHeading)
      const tail = opening !== undefined && Option.isSome(under) && opening.trim() === under.value.trim()
        ? fresh.slice(1)
        : fresh
      const text = [...kept, ...tail].join("\n")
      if ((yield* counter.count(text)) <= maxTokens) return text
    }
    return fresh.join("\n")
  })

/**
 * The newest of `lines` within `maxTokens`, under the heading the first of them was under.
 */
export const newest = (
  counter: TokenCounter.Service,
  lines: ReadonlyArray<string>,
  maxTokens: number
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    for (let start = 0; start < lines.length; start++) {
      const kept = withoutBareHeadings(from(lines, start))
      if (kept.length > 0 && (yield* counter.count(kept.join("\n"))) <= maxTokens) return kept
    }
    return []
  })
