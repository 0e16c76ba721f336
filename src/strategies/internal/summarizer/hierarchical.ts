/**
 * What a hierarchical summarization produces: one extract-facts call folding the new turns into
 * the known facts and the narrative, checked (an empty result is a failure), normalized, attributed
 * to its source messages and capped.
 */
import { Effect } from "effect"
import { attributeSources, type Fact, normalizeFacts } from "../../../domain/Fact.js"
import { factsText, summaryText } from "../../../domain/MemoryContext.js"
import { summaryInput } from "../../../domain/SummaryInput.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import { SkillService } from "../../../services/SkillService.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import type { SummarizationOptions } from "../../SummarizationOptions.js"
import * as Metrics from "../metrics.js"
import { capAtSentence } from "./cap.js"
import type { Plan } from "./plan.js"
import { callSkill, type Produced, type Producer } from "./producers.js"
import { sanitizeFacts } from "./sanitize.js"

/**
 * The newest facts within `maxFacts` and `maxTokens` (the facts block as counted in a prompt);
 * the facts untouched for longest go first. Returns how many were dropped.
 */
export const capFacts = (
  counter: TokenCounter.Service,
  facts: ReadonlyArray<Fact>,
  limits: { readonly maxFacts: number; readonly maxTokens: number }
): Effect.Effect<{ readonly facts: Array<Fact>; readonly dropped: number }> =>
  Effect.gen(function*() {
    let kept = facts.slice(Math.max(0, facts.length - limits.maxFacts))
    const tokens = (list: ReadonlyArray<Fact>) =>
      list.length === 0 ? Effect.succeed(0) : counter.countMessage({ content: factsText(list) })
    while (kept.length > 0 && (yield* tokens(kept)) > limits.maxTokens) kept = kept.slice(1)
    return { facts: kept, dropped: facts.length - kept.length }
  })

/** The settings of the hierarchical memory: the summarizing ones, and its caps resolved. */
export interface HierarchicalSettings extends SummarizationOptions {
  readonly maxNarrativeTokens: number
  readonly maxFacts: number
  readonly maxFactTokens: number
}

/**
 * The producer: incremental, so each message is read by the skill once; the existing facts go in
 * to be kept, updated or removed. The planner keeps verbatim what fits beside the whole preamble:
 * facts and narrative.
 */
export const make = (
  settings: HierarchicalSettings
): Effect.Effect<Producer, never, SkillService | TokenCounter> =>
  Effect.gen(function*() {
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    // The caps hold for the facts and the narrative as shown (the facts are counted as their
    // message already): the narrative's text gets what its message's heading leaves.
    const heading = yield* counter.countMessage({ content: summaryText("") })
    const limits = { ...settings, maxNarrativeTokens: Math.max(1, settings.maxNarrativeTokens - heading) }
    return {
      mode: "hierarchical",
      preambleCap: settings.maxNarrativeTokens + settings.maxFactTokens,
      foldsExistingSummary: true,
      chunksItself: false,
      produce: (plan) => produce(limits, skill, counter, plan)
    }
  })

const produce = (
  limits: HierarchicalSettings,
  skill: SkillService.Service,
  counter: TokenCounter.Service,
  plan: Plan
) =>
  Effect.gen(function*() {
    const output = yield* callSkill(
      limits,
      "extract-facts",
      Effect.flatMap(
        skill.extractFacts({
          conversationId: plan.conversationId,
          text: summaryInput(plan.state.narrative, plan.older),
          maxTokens: limits.maxNarrativeTokens,
          existingFacts: plan.state.facts
        }),
        (output) =>
          output.value.facts.length === 0 && output.value.narrative.trim().length === 0
            ? Effect.fail(
              new SkillExecutionError({
                skillId: output.skillId,
                reason: "EmptyOutput",
                retryable: true,
                detail: "no facts and a blank narrative"
              })
            )
            : Effect.succeed(output)
      )
    )
    // Model output is data: what no store can hold is replaced (and counted when committed), not
    // a reason to drop the fact.
    const sanitized = sanitizeFacts(output.value.facts)
    if (sanitized.replaced > 0) yield* Metrics.modelOutputReplaced(Effect.succeed(sanitized.replaced))
    const normalized = normalizeFacts(sanitized.facts)
    const attributed = attributeSources(plan.state.facts, normalized.facts, plan.older.flatMap((turn) => turn.messages))
    const capped = yield* capFacts(counter, attributed, {
      maxFacts: limits.maxFacts,
      maxTokens: limits.maxFactTokens
    })
    if (normalized.invalid > 0 || capped.dropped > 0) {
      yield* Effect.logWarning("facts dropped").pipe(
        Effect.annotateLogs({
          conversationId: plan.conversationId,
          invalid: normalized.invalid,
          overCap: capped.dropped,
          kept: capped.facts.length
        })
      )
    }
    const cut = yield* capAtSentence(counter, output.value.narrative, limits.maxNarrativeTokens)
    const narrative = cut.text
    if (capped.facts.length === 0 && narrative.length === 0) {
      return yield* new SkillExecutionError({
        skillId: output.skillId,
        reason: "MalformedOutput",
        retryable: false,
        detail: "no valid fact and a blank narrative"
      })
    }
    return {
      narrative,
      facts: capped.facts,
      layers: [],
      inputTokens: output.usage.inputTokens,
      outputTokens: output.usage.outputTokens,
      skillId: output.skillId,
      model: output.model,
      truncated: cut.truncated
    } satisfies Produced
  })
