/**
 * What the memory does with facts: the newest of each kind, a model's changes applied to the known
 * facts, and the limits of both.
 */
import type { Fact, FactCategory } from "../Fact.js"
import type { Turn } from "../Turn.js"
import { documentTerms } from "./searchTerms.js"
import { messageLine } from "./transcript.js"

const withOptional = (
  fact: { readonly key: string; readonly value: string; readonly category: FactCategory },
  confidence: number | undefined,
  sourceSeqs: ReadonlyArray<number> | undefined
): Fact => ({
  ...fact,
  ...(confidence === undefined ? {} : { confidence }),
  ...(sourceSeqs === undefined || sourceSeqs.length === 0 ? {} : { sourceSeqs: sourceSeqs.slice(-MaxSourceSeqs) })
})

/**
 * The most facts kept unless configured otherwise. It is the hierarchical strategy's default
 * `maxFacts`, and the most the offline skill returns.
 */
export const DefaultMaxFacts = 50

/**
 * The last fact of each category but `GENERAL`: in a list oldest first, the newest of each kind.
 * A full cap keeps these longest, so a run of one kind never pushes out every other kind.
 */
export const lastOfEachCategory = <F extends Fact>(facts: ReadonlyArray<F>): Set<F> => {
  const last = new Map<FactCategory, F>()
  for (const fact of facts) if (fact.category !== "GENERAL") last.set(fact.category, fact)
  return new Set(last.values())
}

/**
 * A fact as a model proposes it. It is added when its key is new, else it replaces the known one.
 */
export interface FactUpdate {
  readonly key: string
  readonly value: string
  readonly category: FactCategory
  /** Absent: keep the known fact's confidence. */
  readonly confidence?: number | undefined
  /** Absent: keep the known fact's provenance while its value is unchanged. */
  readonly sourceSeqs?: ReadonlyArray<number> | undefined
}

/**
 * What a model proposes: facts new or changed by the new turns, and the keys of facts that no
 * longer hold.
 */
export interface FactChanges {
  readonly upserts: ReadonlyArray<FactUpdate>
  readonly remove: ReadonlyArray<string>
}

/**
 * The most source seqs a fact keeps: the newest.
 */
export const MaxSourceSeqs = 16

/**
 * Applies changes to known facts. Order is recency: a fact that is new, or whose value or category
 * changed, moves to the end. So caps drop the facts untouched for longest first.
 *
 * - `remove` deletes the facts with those keys. A key both removed and updated is replaced.
 * - An update of a known key replaces its value and category. Its confidence is the update's, or
 *   the known one when the update has none. Its provenance is kept while the value is unchanged.
 * - Keys are compared after trimming. Of two updates of one key, the last wins.
 */
export const applyFactChanges = (existing: ReadonlyArray<Fact>, changes: FactChanges): Array<Fact> => {
  const facts = new Map<string, Fact>(existing.map((fact) => [fact.key, fact]))
  for (const key of changes.remove) facts.delete(key.trim())
  const known = new Map<string, Fact>(existing.map((fact) => [fact.key, fact]))
  for (const update of changes.upserts) {
    const key = update.key.trim()
    const previous = facts.get(key) ?? known.get(key)
    const value = update.value.trim()
    const sameValue = previous !== undefined && previous.value === value
    const next = withOptional(
      { key, value, category: update.category },
      update.confidence ?? previous?.confidence,
      update.sourceSeqs ?? (sameValue ? previous.sourceSeqs : undefined)
    )
    if (facts.has(key) && sameValue && previous.category === next.category) {
      facts.set(key, next)
    } else {
      facts.delete(key)
      facts.set(key, next)
    }
  }
  return [...facts.values()]
}

/**
 * The known facts that turns name: a search term of the fact's key or value is one of the turns'.
 * The turns can change or make obsolete only those. So an extract-facts call shows the model those
 * and keeps the others as they are (`applyFactChanges`).
 */
export const factsNamedIn = (
  facts: ReadonlyArray<Fact>,
  turns: ReadonlyArray<Turn>
): ReadonlyArray<Fact> => {
  if (facts.length === 0) return facts
  const said = documentTerms(turns.flatMap((turn) => turn.messages.map(messageLine)).join("\n"))
  return facts.filter((fact) => {
    for (const term of documentTerms(`${fact.key.replaceAll("_", " ")} ${fact.value}`).keys()) {
      if (said.has(term)) return true
    }
    return false
  })
}
