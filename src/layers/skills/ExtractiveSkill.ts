/**
 * The offline `SkillService`: no model, deterministic, so the memory runs with no API key.
 *
 * The narrative keeps the statements that carry the most the rest does not: identifiers, amounts,
 * dates, addresses, contacts, quantities, and the user's goals, conditions and decisions. Each
 * value appears once, in its newest statement. Tool results read as "field value" lines, not JSON.
 * The narrative of turns said on several days is dated.
 *
 * Facts are those values, keyed by the words said around them; the latest value of a key wins. A
 * cap drops general notes before identifiers and amounts, the most recently said last. Given room
 * shared with the narrative (`maxSharedTokens`), it keeps the newest fact of each kind. Beyond
 * those, it keeps a fact only when it carries more per token than the lines that say the same, or
 * when room is left. The narrative takes the rest of the room.
 *
 * It reads the turns as stored, never a rendered text.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { capFacts, factsText } from "../../domain/internal/contextText.js"
import { DefaultMaxFacts } from "../../domain/internal/facts.js"
import { SkillService } from "../../services/SkillService.js"
import { TokenCounter } from "../../services/TokenCounter.js"
import { mergeFacts } from "./internal/extractive/facts.js"
import { factsWorthTheirRoom, select, type SelectOptions } from "./internal/extractive/narrative.js"
import { normalize, spans } from "./internal/extractive/salient.js"
import { type Statement, statementsOf } from "./internal/extractive/statements.js"
import { extractFactsReading, factsChanged, readsSeveralDays, summaryInput } from "./internal/prompts.js"

/** The narrative of the statements within `maxTokens`. Never empty when anything was said. */
const narrativeOf = (
  counter: TokenCounter.Service,
  statements: ReadonlyArray<Statement>,
  maxTokens: number,
  options: SelectOptions
) =>
  Effect.gen(function*() {
    const text = yield* select(counter, statements, maxTokens, options)
    if (text.length > 0) return text
    // Nothing carried anything: the user's newest words still say what the turns were about.
    const last = [...statements].reverse().find((s) => s.speaker === "User") ?? statements[statements.length - 1]
    return last === undefined ? "" : yield* counter.truncate(last.line, maxTokens)
  })

/**
 * Builds the offline skill over a token counter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const counter = yield* TokenCounter
  // Usage as a model skill would report it for the same call, so the summarizer's figures
  // compare across skills.
  const usage = (read: ReadonlyArray<string>, output: string) =>
    Effect.zipWith(
      Effect.reduce(read, 0, (n, text) => Effect.map(counter.count(text), (tokens) => n + tokens)),
      counter.count(output),
      (inputTokens, outputTokens) => ({ inputTokens, outputTokens })
    )
  return SkillService.of({
    summarize: (input) =>
      Effect.gen(function*() {
        const { existing, fresh } = statementsOf(input)
        const value = yield* narrativeOf(counter, [...existing, ...fresh], input.maxTokens, {
          dated: readsSeveralDays(input),
          namesAlone: false
        })
        return {
          value,
          skillId: "extractive/summarize@5",
          model: null,
          usage: yield* usage([summaryInput(input)], value)
        }
      }),
    extractFacts: (input) =>
      Effect.gen(function*() {
        const { existing, fresh } = statementsOf(input)
        const statements = [...existing, ...fresh]
        const maxFactTokens = input.maxFactTokens ?? input.maxTokens
        // At most as many facts as the hierarchical strategy keeps by default.
        const merged = mergeFacts(input.existingFacts, fresh)
        const capped = yield* capFacts(counter.countMessage, merged, {
          maxFacts: DefaultMaxFacts,
          maxTokens: maxFactTokens
        })
        // Sharing room with the narrative, the facts keep what they carry best, and more when room
        // is left. The narrative takes the rest.
        const shared = input.maxSharedTokens
        const split = shared === undefined
          ? { carried: capped.facts, spare: [] }
          : yield* factsWorthTheirRoom(counter, capped.facts, statements, { shared, facts: maxFactTokens })
        const kept = new Set([...split.carried, ...split.spare])
        const facts = capped.facts.filter((fact) => kept.has(fact))
        // A known fact leaves when the turns cancel or correct its value. One said under other words stays.
        const mergedKeys = new Set(merged.map((fact) => fact.key))
        const mergedValues = new Set(merged.map((fact) => normalize(fact.value)))
        const removed = input.existingFacts
          .filter((fact) => !mergedKeys.has(fact.key) && !mergedValues.has(normalize(fact.value)))
          .map((fact) => fact.key)
        const room = shared === undefined
          ? input.maxTokens
          : Math.max(1, shared - (facts.length === 0 ? 0 : yield* counter.countMessage({ content: factsText(facts) })))
        // What the facts carry, the narrative need not repeat.
        const covered = new Set(
          split.carried.flatMap((fact) => [normalize(fact.value), ...spans(fact.value).map((s) => normalize(s.text))])
        )
        const narrative = input.maxTokens === 0 ? "" : yield* narrativeOf(counter, statements, room, {
          covered,
          dated: readsSeveralDays(input),
          namesAlone: true
        })
        // A model reads the known facts the turns name, and writes the facts new or changed.
        const output = `${JSON.stringify(factsChanged(input.existingFacts, facts))}${narrative}`
        return {
          value: { facts, narrative, removed },
          skillId: "extractive/extract-facts@6",
          model: null,
          usage: yield* usage(extractFactsReading(input), output)
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
