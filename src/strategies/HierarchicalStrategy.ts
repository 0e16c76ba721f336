/**
 * The hierarchical strategy: key/value facts, a running narrative and the newest turns verbatim,
 * inside a token budget. Facts and narrative are folded in the background by an extract-facts
 * skill and stored with the summary state.
 *
 * @since 0.1.0
 */
import { Effect, Layer, PubSub, Schema, type Scope } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import { FallbackUsed, type MemoryEvent } from "../domain/MemoryEvent.js"
import { DataValidationError } from "../errors/DataValidationError.js"
import { hierarchicalProducer } from "../internal/hierarchicalProducer.js"
import { makeJobs } from "../internal/jobs.js"
import { memoCounter } from "../internal/memoCounter.js"
import * as Metrics from "../internal/metrics.js"
import { summaryPreamble } from "../internal/preamble.js"
import { backgroundJob, summarizeConversation, type SummarizerDeps } from "../internal/summarizer.js"
import { summaryTokens } from "../internal/summaryPlan.js"
import { decode } from "../internal/validation.js"
import { assemble } from "../internal/window.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SkillService } from "../services/SkillService.js"
import { TokenCounter } from "../services/TokenCounter.js"
import { defaults as summarizationDefaults, Options, type SummarizationOptions } from "./SummarizationOptions.js"

/** Everything the strategy needs from its environment. */
type Requirements = RepositoryService | SkillService | TokenCounter

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * The options the hierarchical strategy adds to those of `SummarizationStrategy`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Extras = Schema.Struct({
  /** Hard cap on the narrative, in tokens; `summaryTokenCap` when absent. */
  maxNarrativeTokens: Schema.optional(PositiveInt),
  /** The most facts kept; past it, the facts untouched for longest are dropped. */
  maxFacts: Schema.Int.pipe(Schema.between(1, 1000)),
  /** Hard cap on the facts block, in tokens; `summaryTokenCap` when absent. */
  maxFactTokens: Schema.optional(PositiveInt)
})

/**
 * Options of the hierarchical strategy: those of `SummarizationStrategy` (whose `mode` is ignored:
 * the facts and narrative are always folded incrementally, each message read once) and `Extras`.
 *
 * @since 0.1.0
 * @category models
 */
export type HierarchicalOptions = SummarizationOptions & typeof Extras.Type

/**
 * The defaults: those of `SummarizationStrategy`, and at most 50 facts.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: HierarchicalOptions = { ...summarizationDefaults, maxFacts: 50 }

/**
 * Builds the strategy. Its background jobs and event stream live in the scope: closing it
 * interrupts every job.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<HierarchicalOptions> = {}
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
    const deps: SummarizerDeps = {
      repository,
      skill,
      counter,
      settings: {
        ...settings,
        mode: "hierarchical",
        // The planner keeps verbatim what fits beside the whole preamble: facts and narrative.
        summaryTokenCap: settings.maxNarrativeTokens + settings.maxFactTokens,
        retryBaseDelay: settings.retryBaseDelayMillis,
        skillTimeout: settings.skillTimeoutMillis,
        foldsExistingSummary: true,
        chunksItself: false
      },
      produce: hierarchicalProducer(settings),
      publish
    }
    const jobs = yield* makeJobs(backgroundJob(deps))

    const contextOf = (window: RepositoryService.WindowRead) =>
      Effect.gen(function*() {
        // `assemble` truncates the narrative to make room for the newest turns, or to keep within
        // the budget when not even they fit; facts are protected and always shown whole.
        const { preamble, shrink } = yield* summaryPreamble(shownCounter, window.state, { facts: window.state.facts })
        return yield* assemble(repository, {
          strategy: "hierarchical",
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
        const buffer = window.reachedStart ? window.recent.filter((m) => m.role !== "summary") : undefined
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

    const readWindow = (conversationId: ConversationId) =>
      repository.readWindow(conversationId, { after: "cursor", tokenLimit: settings.promptTokenBudget })

    return MemoryManagementStrategy.of({
      name: "hierarchical",
      postAddMessagesHook: ({ conversationId }) => jobs.trigger(conversationId),
      buildContext: Effect.fn("HierarchicalStrategy.buildContext")(function*(conversationId) {
        const window = yield* readWindow(conversationId)
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
        return yield* contextOf(yield* readWindow(conversationId))
      }),
      awaitIdle: jobs.awaitIdle,
      forget: jobs.cancel,
      subscribe: PubSub.subscribe(pubsub)
    })
  })

const operation = "HierarchicalStrategy.make"

const decodeOptions = (options: Partial<HierarchicalOptions>) =>
  Effect.gen(function*() {
    const { maxFactTokens, maxFacts, maxNarrativeTokens, ...rest } = { ...defaults, ...options }
    // The mode is not the hierarchical strategy's to choose: it always folds incrementally.
    const base = yield* decode(Options, operation, "options")({ ...rest, mode: "incremental" })
    const extras = yield* decode(Extras, operation, "options")({ maxFactTokens, maxFacts, maxNarrativeTokens })
    const narrativeCap = extras.maxNarrativeTokens ?? base.summaryTokenCap
    const factCap = extras.maxFactTokens ?? base.summaryTokenCap
    const tooLarge = narrativeCap >= base.promptTokenBudget
      ? "maxNarrativeTokens"
      : factCap >= base.promptTokenBudget
      ? "maxFactTokens"
      : undefined
    if (tooLarge !== undefined) {
      return yield* new DataValidationError({
        operation,
        path: `options.${tooLarge}`,
        reason: "must be below promptTokenBudget"
      })
    }
    return { ...base, maxFacts: extras.maxFacts, maxNarrativeTokens: narrativeCap, maxFactTokens: factCap }
  })

/**
 * The hierarchical strategy as a layer; invalid options fail its construction, and closing the
 * layer interrupts every background job.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<HierarchicalOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
