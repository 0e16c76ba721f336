/**
 * What a summarization produces in each mode. `incremental` folds the summary with the new turns.
 * `full` re-summarizes the original messages. `layered` keeps one summary per chunk, and merges
 * the oldest layers when together they pass the cap. Skill calls get a timeout and bounded retries.
 */
import { Duration, Effect, Schedule } from "effect"
import type { Fact } from "../../../domain/Fact.js"
import { summaryText } from "../../../domain/internal/contextText.js"
import { groupTurns } from "../../../domain/internal/turns.js"
import type { SummaryLayer } from "../../../domain/SummaryState.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import { RepositoryService } from "../../../services/RepositoryService.js"
import { SkillService } from "../../../services/SkillService.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import type { SummarizationOptions } from "../options.js"
import { capAtSentence } from "./cap.js"
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
  /** Whether the summary had to be cut to its cap, after asking again once. */
  readonly truncated: boolean
}

/** A summarization mode: how a plan becomes a summary, and what the planner must know of it. */
export interface Producer extends Traits {
  /** The mode recorded in summarization records and events. */
  readonly mode: string
  /** Whether its runs extract facts. Each commit then emits `FactsExtracted`. */
  readonly extractsFacts: boolean
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
      duration: settings.skillTimeout,
      onTimeout: () =>
        new SkillExecutionError({
          skillId: skillName,
          reason: "Timeout",
          retryable: true,
          detail: `no answer within ${Duration.format(settings.skillTimeout)}`
        })
    }),
    Effect.retry({
      schedule: Schedule.exponential(settings.retryBaseDelay).pipe(Schedule.jittered),
      times: settings.retries,
      while: (error) => error.retryable
    })
  )

/** The summary a skill call starts from: the narrative so far, or none while it is blank. */
export const existingSummary = (narrative: string): SkillService.ExistingSummary<"None" | "Narrative"> =>
  narrative.trim().length === 0 ? { _tag: "None" } : { _tag: "Narrative", text: narrative }

/** The summary an `append` fold starts from: the narrative's latest lines, or none while blank. */
export const latestLines = (lines: string): SkillService.ExistingSummary<"None" | "Latest"> =>
  lines.trim().length === 0 ? { _tag: "None" } : { _tag: "Latest", text: lines }

/** What a summarize call reads: the summary so far and the turns to fold in. */
type Reading = Pick<SkillService.SummarizeInput, "existingSummary" | "turns">

/** The producer of the summarization strategy's `mode`. */
export const make = (
  settings: SummarizationOptions
): Effect.Effect<Producer, never, RepositoryService | SkillService | TokenCounter> =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    // The cap holds for the summary as shown, so its text gets what the message's heading leaves.
    const cap = Math.max(1, settings.summaryTokenCap - (yield* counter.countMessage({ content: summaryText("") })))

    /** One summarize call. A blank answer is an `EmptyOutput` failure, and retried. */
    const ask = (input: SkillService.SummarizeInput) =>
      callSkill(
        settings,
        "summarize",
        Effect.flatMap(skill.summarize(input), (output) =>
          output.value.trim().length === 0
            ? Effect.fail(
              new SkillExecutionError({
                skillId: output.skillId,
                reason: "EmptyOutput",
                retryable: true,
                detail: "the summary is blank"
              })
            )
            : Effect.succeed({ ...output, value: output.value.trim() }))
      )

    /**
     * Summarizes `reading` into at most `maxTokens` tokens. An answer over the cap is asked for once
     * more, with the overrun stated. If the second answer is still over, or the call fails, the
     * answer is cut at a sentence boundary and reported `truncated`. Usage adds up both calls.
     */
    const summarizeCapped = (conversationId: Plan["conversationId"], reading: Reading, maxTokens: number) =>
      Effect.gen(function*() {
        const first = yield* ask({ conversationId, ...reading, maxTokens })
        const tokens = yield* counter.count(first.value)
        if (tokens <= maxTokens) return { ...first, truncated: false }
        yield* Effect.logDebug("summary over its cap: asked again").pipe(
          Effect.annotateLogs({ conversationId, summaryTokens: tokens, cap: maxTokens })
        )
        const second = yield* Effect.either(
          ask({ conversationId, ...reading, maxTokens, overCap: { summary: first.value, tokens } })
        )
        if (second._tag === "Left") {
          yield* Effect.logWarning("asking again for a shorter summary failed: the first answer is cut").pipe(
            Effect.annotateLogs({ conversationId, error: second.left.message })
          )
        }
        const answer = second._tag === "Right" ? second.right : first
        const capped = yield* capAtSentence(counter, answer.value, maxTokens)
        const extra = second._tag === "Right" ? second.right.usage : { inputTokens: 0, outputTokens: 0 }
        return {
          ...answer,
          value: capped.text,
          truncated: capped.truncated,
          usage: {
            inputTokens: first.usage.inputTokens + extra.inputTokens,
            outputTokens: first.usage.outputTokens + extra.outputTokens
          }
        }
      })

    /** `incremental`: one call folding the existing summary with the new turns. */
    const incremental = (plan: Plan) =>
      Effect.map(
        summarizeCapped(
          plan.conversationId,
          { existingSummary: existingSummary(plan.state.narrative), turns: plan.older },
          cap
        ),
        (output): Produced => ({
          narrative: output.value,
          facts: plan.state.facts,
          layers: [],
          inputTokens: output.usage.inputTokens,
          outputTokens: output.usage.outputTokens,
          skillId: output.skillId,
          model: output.model,
          truncated: output.truncated
        })
      )

    /**
     * `full`: re-summarizes every original message up to the new cursor, never a summary of a
     * summary. Input beyond the summarizer's limit is cut into chunks. Each is summarized alone
     * into its share of the cap, and the summaries are joined in order.
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
          (chunk) => summarizeCapped(plan.conversationId, { existingSummary: { _tag: "None" }, turns: chunk }, share)
        )
        const joined = yield* capAtSentence(counter, outputs.map((output) => output.value).join("\n\n"), cap)
        const first = outputs[0]
        return {
          narrative: joined.text,
          truncated: joined.truncated || outputs.some((output) => output.truncated),
          facts: plan.state.facts,
          layers: [],
          inputTokens: outputs.reduce((n, output) => n + output.usage.inputTokens, 0),
          outputTokens: outputs.reduce((n, output) => n + output.usage.outputTokens, 0),
          skillId: first?.skillId ?? "none",
          model: first?.model ?? null
        } satisfies Produced
      })

    /**
     * `layered`: the new turns become a layer of their own. While the layers together pass the
     * cap, the two oldest are merged into one.
     */
    const layered = (plan: Plan) =>
      Effect.gen(function*() {
        const first = plan.older[0]
        const last = plan.older[plan.older.length - 1]
        const fresh = yield* summarizeCapped(plan.conversationId, {
          existingSummary: { _tag: "None" },
          turns: plan.older
        }, cap)
        let truncated = fresh.truncated
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
          // A merge reads the two layers as the summary so far, with no new turns.
          const merged = yield* summarizeCapped(
            plan.conversationId,
            { existingSummary: { _tag: "Layers", older: a.text, newer: b.text }, turns: [] },
            cap
          )
          truncated ||= merged.truncated
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
          model: fresh.model,
          truncated
        } satisfies Produced
      })

    const produce = { incremental, full, layered }[settings.mode]
    return {
      mode: settings.mode,
      extractsFacts: false,
      preambleCap: settings.summaryTokenCap,
      foldsExistingSummary: settings.mode === "incremental",
      chunksItself: settings.mode === "full",
      produce
    }
  })
