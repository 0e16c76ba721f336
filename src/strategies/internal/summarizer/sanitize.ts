/**
 * Model output treated as data. Characters no store can hold, NUL and unpaired surrogates, are
 * replaced and counted before a summary or fact is committed, the same way on every store.
 */
import type { Fact } from "../../../domain/Fact.js"
import { toStorable } from "../../../domain/internal/storable.js"
import type { SummaryLayer } from "../../../domain/SummaryState.js"

/** Facts with their keys and values sanitized, and how many characters were replaced. */
export const sanitizeFacts = (
  facts: ReadonlyArray<Fact>
): { readonly facts: Array<Fact>; readonly replaced: number } => {
  let replaced = 0
  const clean = facts.map((fact) => {
    const key = toStorable(fact.key)
    const value = toStorable(fact.value)
    replaced += key.replaced + value.replaced
    return key.replaced + value.replaced === 0 ? fact : { ...fact, key: key.text, value: value.text }
  })
  return { facts: clean, replaced }
}

/** What a summarization commits, sanitized: narrative, facts and layers. */
export const sanitizeOutput = <
  A extends {
    readonly narrative: string
    readonly facts: ReadonlyArray<Fact>
    readonly layers: ReadonlyArray<SummaryLayer>
  }
>(output: A): { readonly output: A; readonly replaced: number } => {
  const narrative = toStorable(output.narrative)
  const facts = sanitizeFacts(output.facts)
  let replaced = narrative.replaced + facts.replaced
  const layers = output.layers.map((layer) => {
    const text = toStorable(layer.text)
    replaced += text.replaced
    return text.replaced === 0 ? layer : { ...layer, text: text.text }
  })
  return replaced === 0
    ? { output, replaced }
    : { output: { ...output, narrative: narrative.text, facts: facts.facts, layers }, replaced }
}
