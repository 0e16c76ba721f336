/**
 * Facts: key/value statements the memory keeps verbatim, such as ids, amounts, decisions and
 * conditions.
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
 * What kind of statement a fact is.
 *
 * @since 0.1.0
 * @category models
 */
export type FactCategory = typeof FactCategory.Type

/**
 * A fact. `key` identifies it: an update replaces the fact with the same key. `sourceSeqs` are
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
 * A fact, as the `Fact` schema decodes it.
 *
 * @since 0.1.0
 * @category models
 */
export type Fact = typeof Fact.Type
