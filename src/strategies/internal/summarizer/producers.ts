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
import { RepositoryService } from "../../../services/RepositoryService.js"
import { SkillService } from "../../../services/SkillService.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import type { SummarizationOptions } from "../../SummarizationOptions.js"
import { chunkTurns, type Plan, type Traits } from "./plan.js"

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

/** A summarization mode: how a plan becomes a summary, and what the planner must know of it. */
export interface Producer extends Traits {
  /** The mode recorded in summarization records and events. */
  readonly mode: string
  readonly produce: (plan: Plan) => Effect.Effect<Produced, SkillExecutionError | RepositoryService.Errors>
}

/** A skill call with a timeout per attempt and bounded, exponential, jittered retries. */
export const callSkill = <A>(
  settings: SummarizationOptions,
  skillName: string,
  call: Effect.Effect<SkillService.SkillOutput<A>, SkillExecutionError>
): Effect.Effect<SkillService.SkillOutput<A>, SkillExecutionError> =>
  call.pipe(
    Effect.timeoutFail({
      duration: Duration.millis(settings.skillTimeoutMillis),
      onTimeout: () =>
        new SkillExecutionError({
          skillId: skillName,
          reason: "Timeout",
          retryable: true,
          detail: `no answer within ${Duration.format(Duration.millis(settings.skillTimeoutMillis))}`
        })
    }),
    Effect.retry({
      schedule: Schedule.exponential(Duration.millis(settings.retryBaseDelayMillis)).pipe(Schedule.jittered),
      times: settings.retries,
      while: (error) => error.retryable
    })
  )

/** The producer of the summarization strategy's `mode`. */
export const make = (
  settings: SummarizationOptions
): Effect.Effect<Producer, never, RepositoryService | SkillService | TokenCounter> =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    const cap = settings.summaryTokenCap

    /** Summarizes `text` into at most `maxTokens` tokens; a blank answer is an `EmptyOutput` failure. */
    const summarizeCapped = (conversationId: Plan["conversationId"], text: string, maxTokens: number) =>
      callSkill(
        settings,
        "summarize",
        Effect.flatMap(skill.summarize({ conversationId, text, maxTokens }), (output) =>
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
          Effect.map(counter.truncate(output.value.trim(), maxTokens), (value) => ({ ...output, value }))
        )
      )

    /** `incremental`: one call folding the existing summary with the new turns. */
    const incremental = (plan: Plan) =>
      Effect.map(
        summarizeCapped(plan.conversationId, summaryInput(plan.state.narrative, plan.older), cap),
        (output): Produced => ({
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
     * summary. Input beyond the summarizer's limit is cut into chunks summarized independently,
     * each into its share of the cap, and joined in order.
     */
    const full = (plan: Plan) =>
      Effect.gen(function*() {
        const last = plan.older[plan.older.length - 1]
        const originals = last === undefined ? [] : yield* repository.listMessages(plan.conversationId, {
          after: plan.info.systemPrefixSeq,
          before: last.lastSeq + 1
        })
        const chunks = chunkTurns(groupTurns(originals).turns, settings.summarizerInputLimit)
        const share = Math.max(1, Math.floor(cap / Math.max(1, chunks.length)))
        const outputs = yield* Effect.forEach(
          chunks,
          (chunk) => summarizeCapped(plan.conversationId, summaryInput(null, chunk), share)
        )
        const joined = outputs.map((output) => output.value).join("\n\n")
        const first = outputs[0]
        return {
          narrative: yield* counter.truncate(joined, cap),
          facts: plan.state.facts,
          layers: [],
          inputTokens: outputs.reduce((n, output) => n + output.usage.inputTokens, 0),
          outputTokens: outputs.reduce((n, output) => n + output.usage.outputTokens, 0),
          skillId: first?.skillId ?? "none",
          model: first?.model ?? null
        } satisfies Produced
      })

    /**
     * `layered`: the new turns become a layer of their own; while the layers together pass the
     * cap, the two oldest are merged into one.
     */
    const layered = (plan: Plan) =>
      Effect.gen(function*() {
        const first = plan.older[0]
        const last = plan.older[plan.older.length - 1]
        const fresh = yield* summarizeCapped(plan.conversationId, summaryInput(null, plan.older), cap)
        let inputTokens = fresh.usage.inputTokens
        let outputTokens = fresh.usage.outputTokens
        let layers: Array<SummaryLayer> = [...plan.state.layers, {
          fromSeq: first?.firstSeq ?? 1,
          toSeq: last?.lastSeq ?? 1,
          text: fresh.value,
          tokenCount: yield* counter.count(fresh.value)
        }]
        const total = () => counter.count(layers.map((layer) => layer.text).join("\n\n"))
        while (layers.length >= 2 && (yield* total()) > cap) {
          const [a, b, ...rest] = layers
          if (a === undefined || b === undefined) break
          const merged = yield* summarizeCapped(plan.conversationId, summaryInput(`${a.text}\n\n${b.text}`, []), cap)
          inputTokens += merged.usage.inputTokens
          outputTokens += merged.usage.outputTokens
          layers = [{
            fromSeq: a.fromSeq,
            toSeq: b.toSeq,
            text: merged.value,
            tokenCount: yield* counter.count(merged.value)
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
        } satisfies Produced
      })

    const produce = { incremental, full, layered }[settings.mode]
    return {
      mode: settings.mode,
      preambleCap: cap,
      foldsExistingSummary: settings.mode === "incremental",
      chunksItself: settings.mode === "full",
      produce
    }
  })
