/**
 * Facts: key/value statements the memory keeps verbatim (ids, amounts, decisions, conditions),
 * and how changes proposed by a model are merged into the known ones.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Identifier, StorableString } from "./internal/storable.js"

/**
 * What kind of statement a fact is.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FactCategory = Schema.Literal("ENTITY", "DECISION", "CONDITION", "STATE", "NUMERIC", "GENERAL")
  .annotations({
    message: () => ({ message: "must be one of ENTITY, DECISION, CONDITION, STATE, NUMERIC, GENERAL", override: true })
  })

/**
 * @since 0.1.0
 * @category models
 */
export type FactCategory = typeof FactCategory.Type

/**
 * A fact. `key` identifies it (an update replaces the fact with the same key); `sourceSeqs` are
 * the seqs of the messages it was drawn from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fact = Schema.Struct({
  key: Identifier,
  value: StorableString,
  category: FactCategory,
  confidence: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  sourceSeqs: Schema.optional(Schema.Array(Schema.Int.pipe(Schema.positive())))
}).annotations({ identifier: "Fact" })

/**
 * @since 0.1.0
 * @category models
 */
export type Fact = typeof Fact.Type

/**
 * The most facts kept unless configured otherwise: the hierarchical strategy's `maxFacts` by
 * default, and the most the offline skill returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const DefaultMaxFacts = 50

/**
 * The last fact of each category but `GENERAL`: in a list oldest first, the newest of each kind of
 * value, which a full cap keeps longest so that a run of one kind never takes every other with it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const lastOfEachCategory = <F extends Fact>(facts: ReadonlyArray<F>): Set<F> => {
  const last = new Map<FactCategory, F>()
  for (const fact of facts) if (fact.category !== "GENERAL") last.set(fact.category, fact)
  return new Set(last.values())
}

/**
 * A fact as a model proposes it: added when its key is new, replacing the known one otherwise.
 *
 * @since 0.1.0
 * @category models
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
 *
 * @since 0.1.0
 * @category models
 */
export interface FactChanges {
  readonly upserts: ReadonlyArray<FactUpdate>
  readonly remove: ReadonlyArray<string>
}

/**
 * The most source seqs a fact keeps: the newest.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxSourceSeqs = 16

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
 * Applies changes to known facts. Order is recency: a fact that is new or whose value or category
 * changed moves to the end, so that caps drop the facts untouched for longest first.
 *
 * - `remove` deletes the facts with those keys; a key both removed and updated is replaced.
 * - An update of a known key replaces its value and category; its confidence is the update's, or
 *   the known one when the update has none; its provenance is kept while the value is unchanged.
 * - Keys are compared after trimming; of two updates of one key, the last wins.
 *
 * @since 0.1.0
 * @category combinators
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
