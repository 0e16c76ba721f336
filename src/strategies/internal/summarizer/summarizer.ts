/**
 * One conversation's summarization job: under the store's summarization lock, plan, produce and
 * commit by compare-and-set until nothing is due; failures are logged, counted and emitted, and
 * leave the state as it was.
 */
import { Clock, Effect, Option } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { summaryText } from "../../../domain/MemoryContext.js"
import { type MemoryEvent, SummarizationFailed, Summarized } from "../../../domain/MemoryEvent.js"
import * as Metrics from "../metrics.js"
import { plan, type PlanSettings, summaryTokens } from "./plan.js"
import type { CallSettings, Producer, ProducerDeps } from "./producers.js"

/** Everything a job needs. */
export interface SummarizerDeps extends ProducerDeps {
  readonly settings: CallSettings & PlanSettings & {
    readonly mode: string
    readonly pruneSummarized: boolean
    readonly summaryMessages: boolean
  }
  readonly produce: Producer
  readonly publish: (event: MemoryEvent) => Effect.Effect<void>
}

/**
 * One run: plans and, when a summarization is due, produces and commits it. True when the state
 * moved (by this run, or by another writer whose commit won): the caller plans again.
 */
const runOnce = (deps: SummarizerDeps, conversationId: ConversationId) =>
  Effect.gen(function*() {
    const due = yield* plan(deps.repository, deps.counter, deps.settings, conversationId)
    if (Option.isNone(due)) return false
    const planned = due.value
    const first = planned.older[0]
    const last = planned.older[planned.older.length - 1]
    if (first === undefined || last === undefined) return false
    const started = yield* Clock.currentTimeMillis
    const produced = yield* deps.produce(deps, planned)
    // A whole, non-negative number of milliseconds: clocks may be fractional (a test clock after a
    // jittered delay) or step back (the wall clock), and records and events hold a NonNegativeInt.
    const durationMs = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
    const summaryMessage = deps.settings.summaryMessages
      ? {
        content: produced.narrative,
        tokenCount: yield* deps.counter.countMessage({ content: summaryText(produced.narrative) })
      }
      : undefined
    const result = yield* deps.repository.commitSummary({
      conversationId,
      expected: { cursor: planned.state.cursor, version: planned.state.version },
      narrative: produced.narrative,
      facts: produced.facts,
      layers: produced.layers,
      cursor: last.lastSeq,
      record: {
        fromSeq: first.firstSeq,
        toSeq: last.lastSeq,
        summary: produced.narrative,
        mode: deps.settings.mode,
        skillId: produced.skillId,
        model: produced.model,
        inputTokens: produced.inputTokens,
        outputTokens: produced.outputTokens,
        durationMs
      },
      summaryMessage,
      prune: deps.settings.pruneSummarized
    })
    if (result._tag === "Stale") {
      yield* Effect.logDebug("summarization lost a race; planning again").pipe(
        Effect.annotateLogs({ conversationId, cursor: result.current.cursor, version: result.current.version })
      )
      return true
    }
    const foldedTokens = planned.older.reduce((n, turn) => n + turn.tokenCount, 0)
    const tokensBefore = planned.summaryTokens + foldedTokens
    const tokensAfter = yield* summaryTokens(deps.counter, produced.narrative)
    yield* Effect.logInfo("summarized").pipe(
      Effect.annotateLogs({
        conversationId,
        mode: deps.settings.mode,
        fromSeq: first.firstSeq,
        toSeq: last.lastSeq,
        turnsCompressed: planned.older.length,
        tokensBefore,
        tokensAfter,
        tailTurns: planned.tailTurns,
        skillId: produced.skillId
      })
    )
    yield* Metrics.summarizations(Effect.succeed(1))
    yield* Metrics.summarizerInputTokens(Effect.succeed(produced.inputTokens))
    yield* Metrics.summarizerOutputTokens(Effect.succeed(produced.outputTokens))
    yield* Metrics.summarizationDuration(Effect.succeed(durationMs))
    yield* deps.publish(
      new Summarized({
        conversationId,
        mode: deps.settings.mode,
        fromSeq: first.firstSeq,
        toSeq: last.lastSeq,
        version: result.state.version,
        turnsCompressed: planned.older.length,
        tokensBefore,
        tokensAfter,
        inputTokens: produced.inputTokens,
        outputTokens: produced.outputTokens,
        durationMs,
        skillId: produced.skillId
      })
    )
    return true
  })

/**
 * Summarizes a conversation until nothing is due, holding the store's lock for each run (another
 * holder, in this process or another, means the conversation is being taken care of: stop).
 * Fails only with the error that stopped it, after logging, counting and emitting it.
 */
export const summarizeConversation = (deps: SummarizerDeps, conversationId: ConversationId) =>
  Effect.gen(function*() {
    while (true) {
      const ran = yield* deps.repository.withSummarizationLock(conversationId, runOnce(deps, conversationId))
      if (Option.isNone(ran) || !ran.value) return
    }
  }).pipe(
    Effect.tapError((error) =>
      error._tag === "ConversationNotFoundError"
        ? Effect.logDebug("conversation gone; summarization stopped").pipe(Effect.annotateLogs({ conversationId }))
        : Effect.zipRight(
          Effect.logWarning("summarization failed; summary state unchanged").pipe(
            Effect.annotateLogs({ conversationId, error: error._tag, detail: error.message })
          ),
          Effect.zipRight(
            Metrics.summarizationFailures(Effect.succeed(1)),
            deps.publish(new SummarizationFailed({ conversationId, error: error._tag, detail: error.message }))
          )
        )
    ),
    Effect.withSpan("Summarizer.summarizeConversation", { attributes: { conversationId } })
  )

/** The job as a background fiber runs it: its failures were logged, counted and emitted above. */
export const backgroundJob = (deps: SummarizerDeps) => (conversationId: ConversationId): Effect.Effect<void> =>
  Effect.ignore(summarizeConversation(deps, conversationId))
