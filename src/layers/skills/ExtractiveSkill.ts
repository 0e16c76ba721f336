/**
 * The offline `SkillService`: no model, deterministic. It keeps the sentences that carry
 * identifiers, numbers, amounts, dates and decisions, so the memory runs with no API key.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import type { Fact } from "../../domain/Fact.js"
import { parseSummaryInput } from "../../domain/SummaryInput.js"
import { SkillService } from "../../services/SkillService.js"
import { TokenCounter } from "../../services/TokenCounter.js"

const identifier = /\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b|#\d+\b/g
const money = /[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|dollars|euros)\b/gi
const date =
  /\b(?:\d{4}-\d{2}-\d{2}|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)\b/gi
const decision =
  /\b(?:decided|agreed|agree|confirm(?:ed|s)?|approved?|chose|go(?:ing)? with|will|must|deadline|due|need(?:s)? to|plan(?:ned)?|goal|budget|instead)\b/i
const number = /\d/

/** How much a sentence is worth keeping. */
const score = (sentence: string): number =>
  (sentence.match(identifier)?.length ?? 0) * 3 +
  (sentence.match(money)?.length ?? 0) * 3 +
  (sentence.match(date)?.length ?? 0) * 2 +
  (decision.test(sentence) ? 2 : 0) +
  (number.test(sentence) ? 1 : 0)

/** The sentences of the new turns, each prefixed with its speaker. */
const sentencesOf = (newTurns: string): Array<string> => {
  const out: Array<string> = []
  for (const line of newTurns.split("\n")) {
    const match = /^(User|Assistant(?: \([^)]*\))?|Tool(?: \([^)]*\))?|System): (.*)$/.exec(line)
    if (match === null) continue
    const speaker = (match[1] ?? "").replace(/ \(.*\)$/, "")
    for (const sentence of (match[2] ?? "").split(/(?<=[.!?])\s+/)) {
      const trimmed = sentence.trim()
      if (trimmed.length > 0) out.push(`${speaker}: ${trimmed}`)
    }
  }
  return out
}

/** Keeps the highest-scoring lines that fit `maxTokens`, in their original order. */
const fit = (counter: TokenCounter.Service, lines: ReadonlyArray<string>, maxTokens: number) =>
  Effect.gen(function*() {
    // Ranked by what a line carries per token: a long dump of tool output with many ids loses to
    // the sentence that states the one that matters.
    const counted = yield* Effect.forEach(lines, (line) => Effect.map(counter.count(line), (tokens) => tokens + 1))
    const ranked = lines.map((line, index) => {
      const tokens = counted[index] ?? 1
      return { line, index, tokens, score: score(line) / Math.sqrt(tokens) }
    }).sort((a, b) => b.score - a.score || b.index - a.index)
    const kept: Array<{ line: string; index: number }> = []
    let used = 0
    for (const entry of ranked) {
      if (used + entry.tokens > maxTokens) continue
      used += entry.tokens
      kept.push(entry)
    }
    const text = kept.sort((a, b) => a.index - b.index).map((entry) => entry.line).join("\n")
    return text.length > 0 ? text : yield* counter.truncate(lines[lines.length - 1] ?? "", maxTokens)
  })

/** Summarizes: the existing summary's lines and the new key sentences, best first within the cap. */
const summarize = (counter: TokenCounter.Service, text: string, maxTokens: number) => {
  const { existing, newTurns } = parseSummaryInput(text)
  const sentences = sentencesOf(newTurns)
  const key = sentences.filter((sentence) => score(sentence) >= 2)
  // Without key sentences, the user's words still say what the turns were about.
  const fresh = key.length > 0 ? key : sentences.filter((sentence) => sentence.startsWith("User: ")).slice(0, 3)
  const lines = [...(existing === null ? [] : existing.split("\n")), ...fresh]
    .filter((line, i, all) => line.trim().length > 0 && all.indexOf(line) === i)
  return fit(counter, lines, maxTokens)
}

const factKey = (prefix: string, token: string) => `${prefix}:${token.toLowerCase().replace(/\s+/g, "-")}`.slice(0, 255)

/** Facts drawn from key sentences: identifiers (ENTITY), amounts (NUMERIC), dates (CONDITION). */
const extract = (sentences: ReadonlyArray<string>): Array<Fact> => {
  const facts = new Map<string, Fact>()
  for (const sentence of sentences) {
    const value = sentence.length > 300 ? `${sentence.slice(0, 297)}...` : sentence
    for (const token of sentence.match(identifier) ?? []) {
      facts.set(factKey("id", token), { key: factKey("id", token), value, category: "ENTITY" })
    }
    for (const token of sentence.match(money) ?? []) {
      facts.set(factKey("amount", token), { key: factKey("amount", token), value, category: "NUMERIC" })
    }
    for (const token of sentence.match(date) ?? []) {
      facts.set(factKey("date", token), { key: factKey("date", token), value, category: "CONDITION" })
    }
  }
  return [...facts.values()]
}

/** The most facts the offline skill keeps; the oldest go first. */
const maxFacts = 60

/**
 * Builds the offline skill over a token counter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const counter = yield* TokenCounter
  const usage = (input: string, output: string) =>
    Effect.zipWith(counter.count(input), counter.count(output), (inputTokens, outputTokens) => ({
      inputTokens,
      outputTokens
    }))
  return SkillService.of({
    summarize: (input) =>
      Effect.gen(function*() {
        const value = yield* summarize(counter, input.text, input.maxTokens)
        return { value, skillId: "extractive/summarize@1", model: null, usage: yield* usage(input.text, value) }
      }),
    extractFacts: (input) =>
      Effect.gen(function*() {
        const narrative = yield* summarize(counter, input.text, input.maxTokens)
        const merged = new Map(input.existingFacts.map((fact) => [fact.key, fact]))
        for (const fact of extract(sentencesOf(parseSummaryInput(input.text).newTurns))) {
          merged.delete(fact.key)
          merged.set(fact.key, fact)
        }
        const facts = [...merged.values()].slice(-maxFacts)
        const output = `${JSON.stringify(facts)}${narrative}`
        return {
          value: { facts, narrative },
          skillId: "extractive/extract-facts@1",
          model: null,
          usage: yield* usage(input.text, output)
        }
      })
  })
})

/**
 * The offline skill as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SkillService, never, TokenCounter> = Layer.effect(SkillService, make)
