/**
 * What a summarization produces in each mode: `incremental` folds the summary with the new turns,
 * `full` re-summarizes the original messages, `layered` keeps one summary per chunk and merges the
 * oldest layers when together they pass the cap. Skill calls get a timeout and bounded retries.
 */
import { Duration, Effect, Schedule } from "effect"
import type { Fact } from "../../../domain/Fact.js"
import { summaryInput } from "../../../domain/SummaryInput.js"
import type { SummaryLayer } from "../../../domain/SummaryState.js"
import { groupTurns } from "../../../domain/Turn.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { SkillService } from "../../../services/SkillService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import { chunkTurns, type Plan } from "./plan.js"

/** How summary skills are called. */
export interface CallSettings {
  readonly summaryTokenCap: number
  readonly summarizerInputLimit: number
  /** Retries after the first attempt, for retryable failures. */
  readonly retries: number
  readonly retryBaseDelay: Duration.DurationInput
  /** The longest one call may take before it counts as a retryable `Timeout`. */
  readonly skillTimeout: Duration.DurationInput
}

/** What a run produces, to be committed. */
export interface Produced {
  readonly narrative: string
  readonly facts: ReadonlyArray<Fact>
  readonly layers: ReadonlyArray<SummaryLayer>
  readonly inputTokens: number
  readonly outputTokens: number
  readonly skillId: string
  readonly model: string | null
}

/** The services a producer calls. */
export interface ProducerDeps {
  readonly repository: RepositoryService.Service
  readonly skill: SkillService.Service
  readonly counter: TokenCounter.Service
  readonly settings: CallSettings
}

/** A summarization mode. */
export type Producer = (
  deps: ProducerDeps,
  plan: Plan
) => Effect.Effect<Produced, SkillExecutionError | RepositoryService.Errors>

/** A skill call with a timeout per attempt and bounded, exponential, jittered retries. */
export const callSkill = <A>(
  settings: CallSettings,
  skillName: string,
  call: Effect.Effect<SkillService.SkillOutput<A>, SkillExecutionError>
): Effect.Effect<SkillService.SkillOutput<A>, SkillExecutionError> =>
  call.pipe(
    Effect.timeoutFail({
      duration: settings.skillTimeout,
      onTimeout: () =>
        new SkillExecutionError({
          skillId: skillName,
          reason: "Timeout",
          retryable: true,
          detail: `no answer within ${Duration.format(Duration.decode(settings.skillTimeout))}`
        })
    }),
    Effect.retry({
      schedule: Schedule.exponential(settings.retryBaseDelay).pipe(Schedule.jittered),
      times: settings.retries,
      while: (error) => error.retryable
    })
  )

/** Summarizes `text` into at most `maxTokens` tokens; a blank answer is an `EmptyOutput` failure. */
export const summarizeCapped = (
  deps: ProducerDeps,
  conversationId: Plan["conversationId"],
  text: string,
  maxTokens: number
) =>
  callSkill(
    deps.settings,
    "summarize",
    Effect.flatMap(deps.skill.summarize({ conversationId, text, maxTokens }), (output) =>
      output.value.trim().length === 0
        ? Effect.fail(
          new SkillExecutionError({
            skillId: output.skillId,
            reason: "EmptyOutput",
            retryable: true,
            detail: "the summary is blank"
          })
        )
        : Effect.succeed(output))
  ).pipe(
    Effect.flatMap((output) =>
      Effect.map(deps.counter.truncate(output.value.trim(), maxTokens), (value) => ({ ...output, value }))
    )
  )

/** `incremental`: one call folding the existing summary with the new turns. */
export const incremental: Producer = (deps, plan) =>
  Effect.map(
    summarizeCapped(
      deps,
      plan.conversationId,
      summaryInput(plan.state.narrative, plan.older),
      deps.settings.summaryTokenCap
    ),
    (output) => ({
      narrative: output.value,
      facts: plan.state.facts,
      layers: [],
      inputTokens: output.usage.inputTokens,
      outputTokens: output.usage.outputTokens,
      skillId: output.skillId,
      model: output.model
    })
  )

/**
 * `full`: re-summarizes every original message up to the new cursor, never a summary of a
 * summary. Input beyond the summarizer's limit is cut into chunks summarized independently, each
 * into its share of the cap, and joined in order.
 */
export const full: Producer = (deps, plan) =>
  Effect.gen(function*() {
    const last = plan.older[plan.older.length - 1]
    const originals = last === undefined ? [] : yield* deps.repository.listMessages(plan.conversationId, {
      after: plan.info.systemPrefixSeq,
      before: last.lastSeq + 1
    })
    const chunks = chunkTurns(groupTurns(originals).turns, deps.settings.summarizerInputLimit)
    const share = Math.max(1, Math.floor(deps.settings.summaryTokenCap / Math.max(1, chunks.length)))
    const outputs = yield* Effect.forEach(
      chunks,
      (chunk) => summarizeCapped(deps, plan.conversationId, summaryInput(null, chunk), share)
    )
    const joined = outputs.map((output) => output.value).join("\n\n")
    const first = outputs[0]
    return {
      narrative: yield* deps.counter.truncate(joined, deps.settings.summaryTokenCap),
      facts: plan.state.facts,
      layers: [],
      inputTokens: outputs.reduce((n, output) => n + output.usage.inputTokens, 0),
      outputTokens: outputs.reduce((n, output) => n + output.usage.outputTokens, 0),
      skillId: first?.skillId ?? "none",
      model: first?.model ?? null
    }
  })

/**
 * `layered`: the new turns become a layer of their own; while the layers together pass the cap,
 * the two oldest are merged into one.
 */
export const layered: Producer = (deps, plan) =>
  Effect.gen(function*() {
    const cap = deps.settings.summaryTokenCap
    const first = plan.older[0]
    const last = plan.older[plan.older.length - 1]
    const fresh = yield* summarizeCapped(deps, plan.conversationId, summaryInput(null, plan.older), cap)
    let inputTokens = fresh.usage.inputTokens
    let outputTokens = fresh.usage.outputTokens
    let layers: Array<SummaryLayer> = [...plan.state.layers, {
      fromSeq: first?.firstSeq ?? 1,
      toSeq: last?.lastSeq ?? 1,
      text: fresh.value,
      tokenCount: yield* deps.counter.count(fresh.value)
    }]
    const total = () => deps.counter.count(layers.map((layer) => layer.text).join("\n\n"))
    while (layers.length >= 2 && (yield* total()) > cap) {
      const [a, b, ...rest] = layers
      if (a === undefined || b === undefined) break
      const merged = yield* summarizeCapped(deps, plan.conversationId, summaryInput(`${a.text}\n\n${b.text}`, []), cap)
      inputTokens += merged.usage.inputTokens
      outputTokens += merged.usage.outputTokens
      layers = [{
        fromSeq: a.fromSeq,
        toSeq: b.toSeq,
        text: merged.value,
        tokenCount: yield* deps.counter.count(merged.value)
      }, ...rest]
    }
    return {
      narrative: layers.map((layer) => layer.text).join("\n\n"),
      facts: plan.state.facts,
      layers,
      inputTokens,
      outputTokens,
      skillId: fresh.skillId,
      model: fresh.model
    }
  })
