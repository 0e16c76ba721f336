/**
 * The facts of a fold as the hierarchical strategy commits them: one valid fact per key, each
 * traced to its source messages.
 */
import { Either, Schema } from "effect"
import { Fact } from "../../domain/Fact.js"
import { MaxSourceSeqs } from "../../domain/internal/facts.js"
import type { Message } from "../../domain/Message.js"

/** `fact` with the newest `MaxSourceSeqs` of `sourceSeqs`, if any, as its sources. */
const withSources = (fact: Fact, sourceSeqs: ReadonlyArray<number> | undefined): Fact =>
  sourceSeqs === undefined || sourceSeqs.length === 0 ? fact : { ...fact, sourceSeqs: sourceSeqs.slice(-MaxSourceSeqs) }

/**
 * Facts as a store accepts them: one per key, each valid for the `Fact` schema. The last
 * occurrence of a key wins, at its place. Returns how many were dropped as invalid.
 */
export const normalizeFacts = (
  facts: ReadonlyArray<Fact>
): { readonly facts: Array<Fact>; readonly invalid: number } => {
  const byKey = new Map<string, Fact>()
  let invalid = 0
  for (const fact of facts) {
    const decoded = Schema.decodeUnknownEither(Fact)(fact)
    if (Either.isLeft(decoded)) {
      invalid += 1
      continue
    }
    byKey.delete(decoded.right.key)
    byKey.set(decoded.right.key, decoded.right)
  }
  return { facts: [...byKey.values()], invalid }
}

/** Matches `value` as a whole word or phrase, case-insensitively (`ORD-1` is not in `ORD-12`). */
const mentionOf = (value: string): RegExp | undefined => {
  const trimmed = value.trim()
  if (trimmed.length < 3) return undefined
  const escaped = trimmed.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, "iu")
}

/**
 * Provenance. A fact the run left unchanged keeps its source seqs. A new or changed fact keeps the
 * skill's source seqs that lie in the folded messages. Otherwise it is attributed to the folded
 * messages that mention its value whole, or to none when paraphrased.
 */
export const attributeSources = (
  previous: ReadonlyArray<Fact>,
  next: ReadonlyArray<Fact>,
  folded: ReadonlyArray<Message>
): Array<Fact> => {
  const before = new Map(previous.map((fact) => [fact.key, fact]))
  const seqs = new Set(folded.map((message) => message.seq))
  return next.map((fact) => {
    const old = before.get(fact.key)
    if (old !== undefined && old.value === fact.value) {
      return withSources(fact, fact.sourceSeqs ?? old.sourceSeqs)
    }
    const given = (fact.sourceSeqs ?? []).filter((seq) => seqs.has(seq))
    if (given.length > 0) return withSources(fact, given)
    const mention = mentionOf(fact.value)
    const found = mention === undefined
      ? []
      : folded.filter((message) => mention.test(message.content)).map((message) => message.seq)
    return withSources(fact, found)
  })
}
