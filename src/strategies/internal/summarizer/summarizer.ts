/**
 * One conversation's summarization job. Under the store's lease, it plans, produces and commits by
 * compare-and-set until nothing is due. Failures are logged, counted and emitted, and leave the
 * state as it was. A summarizer that keeps failing is paused by its breaker.
 */
import { Clock, Duration, Effect, HashSet, Option, Ref } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import type { Fact } from "../../../domain/Fact.js"
import { summaryText } from "../../../domain/internal/contextText.js"
import { FactsExtracted, type MemoryEvent, SummarizationFailed, Summarized } from "../../../domain/MemoryEvent.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { SettingsStore } from "../../../services/SettingsStore.js"
import { SummarizationLease } from "../../../services/SummarizationLease.js"
import { SummaryStore } from "../../../services/SummaryStore.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import * as Metrics from "../metrics.js"
import type { SummarizationOptions } from "../options.js"
import type * as Breaker from "./breaker.js"
import { makePlanner, summaryTokens } from "./plan.js"
import type { Producer } from "./producers.js"
import { sanitizeOutput } from "./sanitize.js"

/** How the facts changed from `before` to `after`, compared by key. */
export const factChanges = (before: ReadonlyArray<Fact>, after: ReadonlyArray<Fact>) => {
  const known = new Map(before.map((fact) => [fact.key, fact]))
  const kept = new Set(after.map((fact) => fact.key))
  let added = 0
  let updated = 0
  for (const fact of after) {
    const old = known.get(fact.key)
    if (old === undefined) added += 1
    else if (old.value !== fact.value || old.category !== fact.category) updated += 1
  }
  const removed = [...known.keys()].filter((key) => !kept.has(key)).length
  return { added, updated, removed, total: after.length }
}

/** A conversation's summarizer: what a job runs, in the foreground or as a background fiber. */
export interface Summarizer {
  /**
   * Summarizes a conversation until nothing is due, holding the store's lease for each run. Another
   * holder, in any process, is taking care of the conversation, so the run stops. Fails with the
   * error that stopped it, after logging, counting and emitting it. While the breaker holds the
   * summarizer back, fails with `Unavailable`, counted only as skipped; the skill is not called.
   * `due` runs once a summarization is found due, before the lease is taken.
   */
  readonly summarizeConversation: (
    conversationId: ConversationId,
    due?: Effect.Effect<void>
  ) => Effect.Effect<void, RepositoryService.Errors | SkillExecutionError>
  /**
   * The job as a background fiber runs it; its failures are already logged, counted and emitted.
   * It ends with the conversations the breaker held back that may run again now. The caller
   * triggers them, so a conversation that stopped writing during a pause is not left behind.
   */
  readonly backgroundJob: (
    conversationId: ConversationId,
    due: Effect.Effect<void>
  ) => Effect.Effect<ReadonlyArray<ConversationId>>
}

/** How a run ended: the state moved, nothing was due, or the breaker held the call. */
type Outcome = "moved" | "done" | "held"

/** The error of a summarization the breaker held back before the skill. */
const heldError = (held: Breaker.Held) =>
  new SkillExecutionError({
    skillId: held.last.skillId,
    reason: "Unavailable",
    retryable: false,
    detail: `paused after ${held.failures} summarizations in a row failed; ` +
      (held.retryInMillis > 0
        ? `next call in ${Duration.format(Duration.millis(Math.ceil(held.retryInMillis)))}`
        : "one call is finding out whether it answers again") +
      ` (last: ${held.last.message})`
  })

/**
 * Builds a strategy's summarizer from its settings, the producer of its mode, where its events go,
 * and the breaker of the skill it calls. The summary store, the lease and the counter are taken
 * once, here.
 */
export const make = (
  settings: SummarizationOptions,
  producer: Producer,
  publish: (event: MemoryEvent) => Effect.Effect<void>,
  breaker: Breaker.Breaker
): Effect.Effect<
  Summarizer,
  never,
  RepositoryService | SettingsStore | SummaryStore | SummarizationLease | TokenCounter
> =>
  Effect.gen(function*() {
    const summaries = yield* SummaryStore
    const lease = yield* SummarizationLease
    const counter = yield* TokenCounter
    const plan = yield* makePlanner(settings, producer)
    /** Conversations whose summarization the breaker held back since it last let calls through. */
    const waiting = yield* Ref.make(HashSet.empty<ConversationId>())

    /**
     * One run: plans, and when a summarization is due and the breaker allows, produces and commits
     * it. `moved` when this run or another writer moved the state: the caller plans again.
     */
    const runOnce = (
      conversationId: ConversationId,
      continuing: boolean
    ): Effect.Effect<Outcome, RepositoryService.Errors | SkillExecutionError> =>
      Effect.gen(function*() {
        const due = yield* plan(conversationId, continuing)
        if (Option.isNone(due)) return "done"
        const planned = due.value
        const first = planned.older[0]
        const last = planned.older[planned.older.length - 1]
        if (first === undefined || last === undefined) return "done"
        const started = yield* Clock.currentTimeMillis
        const output = yield* breaker.guard(conversationId, producer.produce(planned))
        if (Option.isNone(output)) return "held"
        const sanitized = sanitizeOutput(output.value)
        const produced = sanitized.output
        if (sanitized.replaced > 0) {
          yield* Metrics.modelOutputReplaced(Effect.succeed(sanitized.replaced))
          yield* Effect.logWarning("characters the store cannot hold replaced in the model's output").pipe(
            Effect.annotateLogs({ conversationId, replaced: sanitized.replaced })
          )
        }
        // Records and events hold a NonNegativeInt. Clocks may be fractional, like a test clock
        // after a jittered delay, or step back, like the wall clock.
        const durationMs = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
        const summaryMessage = settings.summaryMessages
          ? {
            content: produced.narrative,
            tokenCount: yield* counter.countMessage({ content: summaryText(produced.narrative) })
          }
          : undefined
        const result = yield* summaries.commitSummary({
          conversationId,
          expected: {
            cursor: planned.state.cursor,
            version: planned.state.version,
            incarnation: planned.info.incarnation
          },
          narrative: produced.narrative,
          facts: produced.facts,
          layers: produced.layers,
          cursor: last.lastSeq,
          record: {
            fromSeq: first.firstSeq,
            toSeq: last.lastSeq,
            summary: produced.narrative,
            summaryTruncated: produced.truncated,
            mode: producer.mode,
            skillId: produced.skillId,
            model: produced.model,
            inputTokens: produced.inputTokens,
            outputTokens: produced.outputTokens,
            durationMs
          },
          summaryMessage,
          prune: settings.pruneSummarized
        })
        if (result._tag === "Stale") {
          yield* Effect.logDebug("summarization lost a race; planning again").pipe(
            Effect.annotateLogs({ conversationId, cursor: result.current.cursor, version: result.current.version })
          )
          return "moved"
        }
        const foldedTokens = planned.older.reduce((n, turn) => n + turn.tokenCount, 0)
        const tokensBefore = planned.summaryTokens + foldedTokens
        const tokensAfter = yield* summaryTokens(counter, produced.narrative)
        yield* Effect.logDebug("summarized").pipe(
          Effect.annotateLogs({
            conversationId,
            mode: producer.mode,
            fromSeq: first.firstSeq,
            toSeq: last.lastSeq,
            turnsCompressed: planned.older.length,
            tokensBefore,
            tokensAfter,
            tailTurns: planned.tailTurns,
            skillId: produced.skillId,
            summaryTruncated: produced.truncated
          })
        )
        yield* Metrics.summarizations(Effect.succeed(1))
        if (produced.truncated) yield* Metrics.summariesTruncated(Effect.succeed(1))
        yield* Metrics.summarizerInputTokens(Effect.succeed(produced.inputTokens))
        yield* Metrics.summarizerOutputTokens(Effect.succeed(produced.outputTokens))
        yield* Metrics.summarizationDuration(Effect.succeed(durationMs))
        yield* publish(
          new Summarized({
            conversationId,
            mode: producer.mode,
            fromSeq: first.firstSeq,
            toSeq: last.lastSeq,
            version: result.state.version,
            turnsCompressed: planned.older.length,
            tokensBefore,
            tokensAfter,
            inputTokens: produced.inputTokens,
            outputTokens: produced.outputTokens,
            durationMs,
            skillId: produced.skillId,
            summaryTruncated: produced.truncated
          })
        )
        if (producer.extractsFacts) {
          yield* publish(
            new FactsExtracted({
              conversationId,
              version: result.state.version,
              ...factChanges(planned.state.facts, result.state.facts),
              skillId: produced.skillId
            })
          )
        }
        return "moved"
      })

    /** A due summarization the breaker held back: skipped and counted, and the summary waits. */
    const skipped = (conversationId: ConversationId, held: Breaker.Held) =>
      Effect.zipRight(
        Effect.zipRight(
          Ref.update(waiting, HashSet.add(conversationId)),
          Effect.logDebug("summarizer paused by its breaker; summarization skipped")
        ).pipe(
          Effect.annotateLogs({ conversationId, failuresInARow: held.failures, retryInMillis: held.retryInMillis })
        ),
        Effect.zipRight(Metrics.summarizationsSkipped(Effect.succeed(1)), Effect.fail(heldError(held)))
      )

    /**
     * Summarizes a conversation until nothing is due, under the store's lease for each run (see
     * `Summarizer.summarizeConversation`).
     */
    const summarizeConversation = (conversationId: ConversationId, due: Effect.Effect<void> = Effect.void) =>
      Effect.gen(function*() {
        // A fold that starts at the high-water mark goes down to the low-water mark, in as many
        // runs as the summarizer's input limit needs.
        let continuing = false
        while (true) {
          // Most triggers find nothing due. So plan first without the lease, which costs a database
          // row, and take it only to plan again and fold.
          if (Option.isNone(yield* plan(conversationId, continuing))) return Option.none<Breaker.Held>()
          // A paused summarizer is not called and takes no lease: the summary waits.
          const held = yield* breaker.held
          if (Option.isSome(held)) return held
          yield* due
          const ran = yield* lease.withLease(conversationId, runOnce(conversationId, continuing))
          if (Option.isNone(ran) || ran.value === "done") return Option.none<Breaker.Held>()
          // Held under the lease: another run took a half-open breaker's one call.
          if (ran.value === "held") return yield* breaker.held
          continuing = true
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
                publish(new SummarizationFailed({ conversationId, error: error._tag, detail: error.message }))
              )
            )
        ),
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: (held) => skipped(conversationId, held) })),
        Effect.withSpan("Summarizer.summarizeConversation", { attributes: { conversationId } })
      )

    return {
      summarizeConversation,
      // Nobody joins a background job. `summarizeConversation` already reported its failures, so
      // they end here.
      backgroundJob: (conversationId, due) =>
        Effect.zipRight(
          Effect.ignore(summarizeConversation(conversationId, due)),
          // Once calls may go through, the conversations held back are due again. If another takes
          // a half-open breaker's one call, each is held and waits again.
          Effect.flatMap(breaker.held, (held) =>
            Option.isSome(held)
              ? Effect.succeed([])
              : Effect.map(
                Ref.getAndSet(waiting, HashSet.empty()),
                (woken) => [...HashSet.remove(woken, conversationId)]
              ))
        )
    }
  })
