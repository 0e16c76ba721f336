/**
 * The summarization strategy: a running summary of the older conversation, folded in the
 * background by a summarize skill, in front of the newest turns verbatim, inside a token budget.
 *
 * @since 0.1.0
 */
import { Effect, Layer, PubSub, type Scope } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import { FallbackUsed, type MemoryEvent } from "../domain/MemoryEvent.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { makeJobs } from "../internal/jobs.js"
import { memoCounter } from "../internal/memoCounter.js"
import * as Metrics from "../internal/metrics.js"
import { summaryPreamble } from "../internal/preamble.js"
import { backgroundJob, summarizeConversation, type SummarizerDeps } from "../internal/summarizer.js"
import { summaryTokens } from "../internal/summaryPlan.js"
import * as Producers from "../internal/summaryProducers.js"
import { decode } from "../internal/validation.js"
import { assemble } from "../internal/window.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SkillService } from "../services/SkillService.js"
import { TokenCounter } from "../services/TokenCounter.js"
import { defaults, Options, type SummarizationOptions } from "./SummarizationOptions.js"

/** Everything the strategy needs from its environment. */
type Requirements = RepositoryService | SkillService | TokenCounter

const producers = { incremental: Producers.incremental, full: Producers.full, layered: Producers.layered } as const

/**
 * Builds the strategy. Its background jobs and event stream live in the scope: closing it
 * interrupts every job.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<SummarizationOptions> = {}
): Effect.Effect<MemoryManagementStrategy.Service, DataValidationError, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* decodeOptions(options)
    const repository = yield* RepositoryService
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    // The summary and facts shown on every read are counted once per text, not once per read.
    const shownCounter = yield* memoCounter(counter)
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
    const publish = (event: MemoryEvent) => Effect.asVoid(PubSub.publish(pubsub, event))
    const callSettings = {
      ...settings,
      retryBaseDelay: settings.retryBaseDelayMillis,
      skillTimeout: settings.skillTimeoutMillis,
      foldsExistingSummary: settings.mode === "incremental",
      chunksItself: settings.mode === "full"
    }
    const deps: SummarizerDeps = {
      repository,
      skill,
      counter,
      settings: callSettings,
      produce: producers[settings.mode],
      publish
    }
    const jobs = yield* makeJobs(backgroundJob(deps))

    const contextOf = (window: RepositoryService.WindowRead) =>
      Effect.gen(function*() {
        const { preamble, shrink } = yield* summaryPreamble(shownCounter, window.state, { facts: [] })
        return yield* assemble(repository, {
          strategy: "summarization",
          window,
          preamble,
          budget: settings.promptTokenBudget,
          minTurns: settings.kRawTurns,
          shrink
        })
      })

    /** Whether a summarization is due that has not happened: the background is behind. */
    const isBehind = (window: RepositoryService.WindowRead, turnsInBuffer: number) =>
      Effect.gen(function*() {
        if (turnsInBuffer <= settings.kRawTurns) return false
        const buffer = window.reachedStart
          ? window.recent.filter((m) => m.role !== "summary")
          : undefined
        const bufferTokens = buffer !== undefined
          ? buffer.reduce((n, m) => n + m.tokenCount, 0)
          : (yield* repository.countMessages(window.info.conversationId, { after: window.after })).tokenCount
        const messages = buffer?.length ?? window.info.lastSeq - window.after
        const byCount = settings.messageTrigger !== undefined && messages > settings.messageTrigger.threshold
        const summary = yield* summaryTokens(shownCounter, window.state.narrative)
        return byCount || summary + bufferTokens > settings.chunkSummarizeThreshold
      })

    const fallback = (conversationId: ConversationId, reason: FallbackUsed["reason"], detail: string) =>
      Effect.zipRight(
        Metrics.fallbacks(Effect.succeed(1)),
        publish(new FallbackUsed({ conversationId, reason, detail }))
      )

    /** Summarizes now: joins the running job, or runs one inline. */
    const summarizeNow = (conversationId: ConversationId) =>
      Effect.flatMap(
        jobs.isRunning(conversationId),
        (running) => (running ? jobs.awaitIdle(conversationId) : summarizeConversation(deps, conversationId))
      )

    return MemoryManagementStrategy.of({
      name: "summarization",
      postAddMessagesHook: ({ conversationId }) => jobs.trigger(conversationId),
      buildContext: Effect.fn("SummarizationStrategy.buildContext")(function*(conversationId) {
        const window = yield* repository.readWindow(conversationId, {
          after: "cursor",
          tokenLimit: settings.promptTokenBudget
        })
        const context = yield* contextOf(window)
        if (context.turnsOmitted === 0) return context
        if (!(yield* isBehind(window, context.turnsShown + context.turnsOmitted))) return context
        if (settings.lazyFallback === "window") {
          yield* jobs.trigger(conversationId)
          yield* fallback(conversationId, "summary-behind", `${context.turnsOmitted} turns omitted, summary behind`)
          return context
        }
        const outcome = yield* Effect.either(summarizeNow(conversationId))
        if (outcome._tag === "Left") {
          if (outcome.left._tag === "ConversationNotFoundError") return yield* outcome.left
          yield* fallback(conversationId, "failure", outcome.left.message)
          return context
        }
        return yield* contextOf(
          yield* repository.readWindow(conversationId, { after: "cursor", tokenLimit: settings.promptTokenBudget })
        )
      }),
      awaitIdle: jobs.awaitIdle,
      forget: jobs.cancel,
      subscribe: PubSub.subscribe(pubsub)
    })
  })

const decodeOptions = (options: Partial<SummarizationOptions>) =>
  decode(Options, "SummarizationStrategy.make", "options")({ ...defaults, ...options })

/**
 * The summarization strategy as a layer; invalid options fail its construction, and closing the
 * layer interrupts every background job.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<SummarizationOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
