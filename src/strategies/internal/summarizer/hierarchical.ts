/**
 * What a hierarchical summarization produces. `incremental`: one extract-facts call folds the new
 * turns into the known facts and narrative. `full`: the facts and narrative are extracted again
 * from the original messages, in chunks within the summarizer's input limit. Each answer is
 * checked, normalized, attributed to its source messages and capped. An empty answer is a failure.
 */
import { Effect } from "effect"
import type { Fact } from "../../../domain/Fact.js"
import { capFacts, factsText, summaryText } from "../../../domain/internal/contextText.js"
import { groupTurns, messagesOf } from "../../../domain/internal/turns.js"
import type { Message } from "../../../domain/Message.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import { RepositoryService } from "../../../services/RepositoryService.js"
import { SkillService } from "../../../services/SkillService.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import { attributeSources, normalizeFacts } from "../facts.js"
import * as Metrics from "../metrics.js"
import type { SummarizationOptions } from "../options.js"
import { capAtSentence } from "./cap.js"
import * as NarrativeLines from "./narrativeLines.js"
import { chunkTurns, type Plan } from "./plan.js"
import { callSkill, existingSummary, latestLines, type Produced, type Producer } from "./producers.js"
import { sanitizeFacts } from "./sanitize.js"

/** The settings of the hierarchical memory: the summarizing ones, and its caps resolved. */
export interface HierarchicalSettings extends SummarizationOptions {
  readonly maxNarrativeTokens: number
  readonly maxFacts: number
  readonly maxFactTokens: number
  readonly narrativeFold: "append" | "rewrite"
}

/** The share of the preamble an `append` fold reads again: the narrative's latest lines. */
const latestShare = 0.05

/**
 * The share of the preamble an `append` fold has for the facts and its new lines. The earlier
 * lines keep the rest, until the facts and the new lines need it.
 */
const writeShare = 0.35

/**
 * The producer of the settings' mode. `incremental`, and any mode but `full`: the skill reads each
 * message once, and updates the existing facts and narrative. `full`: each run reads the original
 * messages again, in chunks, from no narrative. The planner keeps verbatim what fits beside the
 * whole preamble.
 */
export const make = (
  settings: HierarchicalSettings
): Effect.Effect<Producer, never, RepositoryService | SkillService | TokenCounter> =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    // The caps hold for the facts and narrative as shown. So the narrative's text gets what its
    // message's heading leaves; facts are already counted as a message.
    const heading = yield* counter.countMessage({ content: summaryText("") })
    const limits = { ...settings, maxNarrativeTokens: Math.max(1, settings.maxNarrativeTokens - heading) }
    const full = settings.mode === "full"
    return {
      mode: full ? "hierarchical-full" : "hierarchical",
      preambleCap: settings.maxNarrativeTokens + settings.maxFactTokens,
      foldsExistingSummary: !full,
      chunksItself: full,
      extractsFacts: true,
      produce: (plan) =>
        full ? produceFull(limits, repository, skill, counter, plan) : produceIncremental(limits, skill, counter, plan)
    }
  })

/** One extract-facts call, timed out and retried. No facts and a blank narrative is a failure. */
const extract = (
  limits: HierarchicalSettings,
  skill: SkillService.Service,
  input: SkillService.ExtractFactsInput
) =>
  callSkill(
    limits,
    "extract-facts",
    Effect.flatMap(skill.extractFacts(input), (output) =>
      output.value.facts.length === 0 && output.value.narrative.trim().length === 0
        ? Effect.fail(
          new SkillExecutionError({
            skillId: output.skillId,
            reason: "EmptyOutput",
            retryable: true,
            detail: "no facts and a blank narrative"
          })
        )
        : Effect.succeed(output))
  )

/**
 * The facts of an answer as they can be kept: sanitized, normalized, attributed to the messages
 * read, and capped. Characters no store can hold are replaced and counted; the fact stays.
 */
const keepFacts = (
  limits: HierarchicalSettings,
  counter: TokenCounter.Service,
  previous: ReadonlyArray<Fact>,
  facts: ReadonlyArray<Fact>,
  read: ReadonlyArray<Message>
) =>
  Effect.gen(function*() {
    const sanitized = sanitizeFacts(facts)
    if (sanitized.replaced > 0) yield* Metrics.modelOutputReplaced(Effect.succeed(sanitized.replaced))
    const normalized = normalizeFacts(sanitized.facts)
    const attributed = attributeSources(previous, normalized.facts, read)
    // In whatever order the skill gives its facts, a full cap keeps the last of each category.
    const capped = yield* capFacts(counter.countMessage, attributed, {
      maxFacts: limits.maxFacts,
      maxTokens: limits.maxFactTokens,
      keepEachCategory: true
    })
    return { facts: capped.facts, invalid: normalized.invalid, overCap: capped.dropped }
  })

/** The run's result, once its facts and narrative are known. A run that kept nothing is a failure. */
const finish = (
  plan: Plan,
  result: {
    readonly facts: ReadonlyArray<Fact>
    readonly invalid: number
    readonly overCap: number
    readonly narrative: string
    readonly truncated: boolean
    readonly inputTokens: number
    readonly outputTokens: number
    readonly skillId: string
    readonly model: string | null
  }
) =>
  Effect.gen(function*() {
    if (result.invalid > 0 || result.overCap > 0) {
      yield* Effect.logWarning("facts dropped").pipe(
        Effect.annotateLogs({
          conversationId: plan.conversationId,
          invalid: result.invalid,
          overCap: result.overCap,
          kept: result.facts.length
        })
      )
    }
    if (result.facts.length === 0 && result.narrative.length === 0) {
      return yield* new SkillExecutionError({
        skillId: result.skillId,
        reason: "MalformedOutput",
        retryable: false,
        detail: "no valid fact and a blank narrative"
      })
    }
    return {
      narrative: result.narrative,
      facts: result.facts,
      layers: [],
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
      skillId: result.skillId,
      model: result.model,
      truncated: result.truncated
    } satisfies Produced
  })

/** `incremental`: the new turns folded into the known facts and narrative, in one call. */
const produceIncremental = (
  limits: HierarchicalSettings,
  skill: SkillService.Service,
  counter: TokenCounter.Service,
  plan: Plan
) =>
  Effect.gen(function*() {
    // The facts and the narrative share the preamble's room. The narrative takes what the facts
    // leave, and a skill may keep fewer facts when its narrative carries more per token.
    const shared = limits.maxNarrativeTokens + limits.maxFactTokens
    // `append`: the fold reads the narrative's latest lines again. The earlier lines keep what the
    // facts and the new lines leave (`NarrativeLines.join`).
    const parts: NarrativeLines.Parts = limits.narrativeFold === "append"
      ? yield* NarrativeLines.split(counter, plan.state.narrative, Math.max(1, Math.round(shared * latestShare)))
      : { earlier: [], latest: plan.state.narrative }
    const earlier = yield* NarrativeLines.within(counter, parts.earlier, Math.round(shared * (1 - writeShare)))
    const room = Math.max(1, shared - (earlier.length === 0 ? 0 : yield* counter.count(earlier.join("\n"))))
    // A skill that writes to a length, like a model, gets what the known facts leave of the room,
    // and at least half. The earlier lines give way to what it writes.
    const known = plan.state.facts.length === 0
      ? 0
      : yield* counter.countMessage({ content: factsText(plan.state.facts) })
    const output = yield* extract(limits, skill, {
      conversationId: plan.conversationId,
      existingSummary: limits.narrativeFold === "append"
        ? latestLines(parts.latest)
        : existingSummary(parts.latest),
      turns: plan.older,
      maxTokens: Math.min(limits.maxNarrativeTokens, Math.max(Math.ceil(room / 2), room - known)),
      maxFactTokens: limits.maxFactTokens,
      maxSharedTokens: room,
      existingFacts: plan.state.facts
    })
    const kept = yield* keepFacts(
      limits,
      counter,
      plan.state.facts,
      output.value.facts,
      messagesOf(plan.older)
    )
    const factTokens = kept.facts.length === 0 ? 0 : yield* counter.countMessage({ content: factsText(kept.facts) })
    const cap = Math.max(1, shared - factTokens)
    const cut = yield* capAtSentence(counter, output.value.narrative, cap)
    const narrative = earlier.length === 0 ? cut.text : yield* NarrativeLines.join(counter, earlier, cut.text, cap)
    return yield* finish(plan, {
      ...kept,
      narrative,
      truncated: cut.truncated,
      inputTokens: output.usage.inputTokens,
      outputTokens: output.usage.outputTokens,
      skillId: output.skillId,
      model: output.model
    })
  })

/**
 * `full`: every original message up to the new cursor, read again, never a summary of a summary.
 * The turns are cut into chunks of at most `summarizerInputLimit` tokens, read oldest first. Each
 * chunk gets no existing summary, and the facts of the chunks before it. Each narrative gets its
 * share of the cap, and the narratives are joined in order.
 */
const produceFull = (
  limits: HierarchicalSettings,
  repository: RepositoryService.Service,
  skill: SkillService.Service,
  counter: TokenCounter.Service,
  plan: Plan
) =>
  Effect.gen(function*() {
    const last = plan.older[plan.older.length - 1]
    const originals = last === undefined ? [] : yield* repository.listMessages(plan.conversationId, {
      after: plan.info.systemPrefixSeq,
      before: last.lastSeq + 1
    })
    const chunks = chunkTurns(groupTurns(originals).turns, limits.summarizerInputLimit)
    const share = Math.max(1, Math.floor(limits.maxNarrativeTokens / Math.max(1, chunks.length)))
    let kept: { readonly facts: ReadonlyArray<Fact>; readonly invalid: number; readonly overCap: number } = {
      facts: [],
      invalid: 0,
      overCap: 0
    }
    const narratives: Array<string> = []
    let truncated = false
    let inputTokens = 0
    let outputTokens = 0
    let answered: { readonly skillId: string; readonly model: string | null } | undefined
    for (const chunk of chunks) {
      const output = yield* extract(limits, skill, {
        conversationId: plan.conversationId,
        existingSummary: { _tag: "None" },
        turns: chunk,
        maxTokens: share,
        maxFactTokens: limits.maxFactTokens,
        existingFacts: kept.facts
      })
      // Facts drawn before from the same messages, by an earlier chunk or run, keep their provenance.
      const next = yield* keepFacts(
        limits,
        counter,
        [...plan.state.facts, ...kept.facts],
        output.value.facts,
        originals
      )
      kept = { facts: next.facts, invalid: kept.invalid + next.invalid, overCap: kept.overCap + next.overCap }
      const cut = yield* capAtSentence(counter, output.value.narrative, share)
      if (cut.text.length > 0) narratives.push(cut.text)
      truncated ||= cut.truncated
      inputTokens += output.usage.inputTokens
      outputTokens += output.usage.outputTokens
      answered ??= { skillId: output.skillId, model: output.model }
    }
    const joined = yield* capAtSentence(counter, narratives.join("\n\n"), limits.maxNarrativeTokens)
    return yield* finish(plan, {
      ...kept,
      narrative: joined.text,
      truncated: truncated || joined.truncated,
      inputTokens,
      outputTokens,
      skillId: answered?.skillId ?? "none",
      model: answered?.model ?? null
    })
  })
