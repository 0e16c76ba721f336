/**
 * What the summarizing strategies share: background jobs over a summarizer, an event stream, and
 * a `buildContext` that shows the summary state in front of the newest turns and falls back when
 * the summary is behind. Each strategy brings its summarizer settings and producer.
 */
import { Effect, PubSub, type Scope } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"
import { FallbackUsed, type MemoryEvent } from "../../domain/MemoryEvent.js"
import { MemoryManagementStrategy } from "../../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SkillService } from "../../services/SkillService.js"
import { TokenCounter } from "../../services/TokenCounter.js"
import type { SummarizationOptions } from "../SummarizationOptions.js"
import { memoCounter } from "./context/memoCounter.js"
import { summaryPreamble } from "./context/preamble.js"
import { assemble } from "./context/window.js"
import * as Metrics from "./metrics.js"
import { makeJobs } from "./summarizer/jobs.js"
import { summaryTokens } from "./summarizer/plan.js"
import { backgroundJob, summarizeConversation, type SummarizerDeps } from "./summarizer/summarizer.js"

/** How one summarizing strategy differs from the other. */
export interface SummarizingSpec {
  readonly name: "summarization" | "hierarchical"
  /** The span of `buildContext`, e.g. `SummarizationStrategy.buildContext`. */
  readonly span: string
  readonly settings: SummarizationOptions
  /** What the summarizer runs with. */
  readonly summarizer: Pick<SummarizerDeps, "settings" | "produce">
  /** Whether the context shows the facts of the summary state. */
  readonly showFacts: boolean
}

/** Builds a summarizing strategy; its jobs and event stream live in the scope. */
export const makeSummarizing = (
  spec: SummarizingSpec
): Effect.Effect<
  MemoryManagementStrategy.Service,
  never,
  RepositoryService | SkillService | TokenCounter | Scope.Scope
> =>
  Effect.gen(function*() {
    const { name, settings } = spec
    const repository = yield* RepositoryService
    const skill = yield* SkillService
    const counter = yield* TokenCounter
    // The summary and facts shown on every read are counted once per text, not once per read.
    const shownCounter = yield* memoCounter(counter)
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
    const publish = (event: MemoryEvent) => Effect.asVoid(PubSub.publish(pubsub, event))
    const deps: SummarizerDeps = { repository, skill, counter, ...spec.summarizer, publish }
    const jobs = yield* makeJobs(backgroundJob(deps))

    const readWindow = (conversationId: ConversationId) =>
      repository.readWindow(conversationId, { after: "cursor", tokenLimit: settings.promptTokenBudget })

    const contextOf = (window: RepositoryService.WindowRead) =>
      Effect.gen(function*() {
        // `assemble` truncates the summary to make room for the newest turns, or to keep within
        // the budget when not even they fit; facts are protected and always shown whole.
        const facts = spec.showFacts ? window.state.facts : []
        const { preamble, shrink } = yield* summaryPreamble(shownCounter, window.state, { facts })
        return yield* assemble(repository, {
          strategy: name,
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

    return MemoryManagementStrategy.of({
      name,
      postAddMessagesHook: ({ conversationId }) => jobs.trigger(conversationId),
      buildContext: Effect.fn(spec.span)(function*(conversationId) {
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
