/**
 * Model output treated as data: the characters no store can hold (NUL, unpaired surrogates) are
 * replaced before a summary or a fact is committed, the same way on every store, and counted.
 */
import type { Fact } from "../../../domain/Fact.js"
import type { SummaryLayer } from "../../../domain/SummaryState.js"

// PostgreSQL `text` and `jsonb` refuse U+0000, and an unpaired surrogate has no UTF-8 encoding:
// left in, a summary could never be committed on a SQL store (and would be retried for ever).
// eslint-disable-next-line no-control-regex -- NUL is exactly the character to find
const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** The text with every unstorable character replaced by U+FFFD, and how many were. */
export const sanitizeText = (text: string): { readonly text: string; readonly replaced: number } => {
  let replaced = 0
  const clean = text.replace(unstorable, () => {
    replaced += 1
    return "\uFFFD"
  })
  return { text: clean, replaced }
}

/** Facts with their keys and values sanitized, and how many characters were replaced. */
export const sanitizeFacts = (
  facts: ReadonlyArray<Fact>
): { readonly facts: Array<Fact>; readonly replaced: number } => {
  let replaced = 0
  const clean = facts.map((fact) => {
    const key = sanitizeText(fact.key)
    const value = sanitizeText(fact.value)
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
  const narrative = sanitizeText(output.narrative)
  const facts = sanitizeFacts(output.facts)
  let replaced = narrative.replaced + facts.replaced
  const layers = output.layers.map((layer) => {
    const text = sanitizeText(layer.text)
    replaced += text.replaced
    return text.replaced === 0 ? layer : { ...layer, text: text.text }
  })
  return replaced === 0
    ? { output, replaced }
    : { output: { ...output, narrative: narrative.text, facts: facts.facts, layers }, replaced }
}
