/**
 * The policy every summarizing strategy shares (`SummarizationStrategy`, `HierarchicalStrategy`),
 * over the producer of its summaries.
 */
import { Effect, Option, PubSub, type Scope } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"
import type { ConversationSettings } from "../../domain/ConversationSettings.js"
import { omissionText } from "../../domain/internal/contextText.js"
import { withOverrides } from "../../domain/internal/overrides.js"
import { groupTurns } from "../../domain/internal/turns.js"
import { FallbackUsed, type MemoryEvent } from "../../domain/MemoryEvent.js"
import type { UserId } from "../../domain/UserId.js"
import { DataValidationError } from "../../errors/DataValidationError.js"
import { MemoryManagementStrategy } from "../../services/MemoryManagementStrategy.js"
import { MessageIndex } from "../../services/MessageIndex.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SettingsStore } from "../../services/SettingsStore.js"
import type { SkillService } from "../../services/SkillService.js"
import type { SummarizationLease } from "../../services/SummarizationLease.js"
import type { SummaryStore } from "../../services/SummaryStore.js"
import { TokenCounter } from "../../services/TokenCounter.js"
import { UserStore } from "../../services/UserStore.js"
import { EmbeddingJobs } from "../Recall.js"
import { memoCounter } from "./context/memoCounter.js"
import { summaryPreamble, withoutShown } from "./context/preamble.js"
import { digestLimit, shareRooms, userReserve, userSections, withUser } from "./context/user.js"
import { assemble, emptyContext, withCurrentSystem } from "./context/window.js"
import { spansDays, withLabels } from "./dates.js"
import * as Metrics from "./metrics.js"
import type { SummarizationOptions } from "./options.js"
import { withRecall } from "./recall/block.js"
import { conversationSource, userSource } from "./recall/search.js"
import * as Breaker from "./summarizer/breaker.js"
import { interruptOnClose, type Jobs, makeJobs } from "./summarizer/jobs.js"
import { loadBuffer, summaryTokens, trigger } from "./summarizer/plan.js"
import type * as Producers from "./summarizer/producers.js"
import * as Summarizer from "./summarizer/summarizer.js"
import { makeUserFacts } from "./userFacts.js"

/** The most recalled turns a context considers, best first, while the block fits. */
const recallCandidates = 8

/**
 * The storage ports the policy reads and writes: the log, the summary state, the settings, the
 * index for recall, the lease and the user store.
 */
export type Ports = RepositoryService | SummaryStore | SettingsStore | MessageIndex | SummarizationLease | UserStore

/**
 * The policy of every summarizing strategy, over the producer of its summaries. A write triggers
 * the conversation's background job. A context shows the summary state before the newest turns.
 * When the summary is behind, it serves the window (`lazyFallback: "window"`) or summarizes
 * first (`"sync"`). `HierarchicalStrategy` is this policy with a facts producer. With
 * `recall: "hybrid"`, the index must also search by meaning (`Recall.layerHybrid`). Otherwise it
 * fails with a `DataValidationError` naming `options.recall`.
 */
export const makeWith = (
  settings: SummarizationOptions,
  producer: Producers.Producer,
  view: {
    readonly name: "summarization" | "hierarchical"
    /** Whether the context shows the facts of the summary state. */
    readonly showFacts: boolean
  }
): Effect.Effect<
  MemoryManagementStrategy.Service,
  DataValidationError,
  Ports | SkillService | TokenCounter | Scope.Scope
> =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const messageIndex = yield* MessageIndex
    const stored = yield* SettingsStore
    const users = yield* UserStore
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
    const publish = (event: MemoryEvent) => Effect.asVoid(PubSub.publish(pubsub, event))
    // Hybrid when the strategy is built for it; a conversation's `lexical` stays lexical.
    const hybrid = settings.recall === "hybrid" && (yield* requireHybridIndex(view.name))
    // The summary and facts shown on every read are counted once per text, not once per read.
    const shownCounter = yield* memoCounter(yield* TokenCounter)
    // One breaker for the skill: a skill that keeps failing is left alone by both background jobs.
    const breaker = yield* Breaker.make(settings, publish)
    const summarizer = yield* Summarizer.make(settings, producer, publish, breaker)
    // What is known about a conversation's user is also learned in the background.
    const userFacts = yield* makeUserFacts(settings, breaker)
    // A job ends with the conversations the paused summarizer held back; their jobs start.
    const jobs: Jobs = yield* makeJobs(
      (conversationId, due) =>
        Effect.flatMap(
          summarizer.backgroundJob(conversationId, due),
          (woken) => Effect.forEach(woken, (other) => jobs.trigger(other), { discard: true })
        ),
      { concurrency: settings.summarizationConcurrency }
    )
    // Registered after both, so on close it runs first, while the jobs, store and skill live.
    yield* interruptOnClose(settings.shutdownDrain, { summaries: jobs, userFacts })

    // The `full` view reads the newest turns, covered by the summary or not. The `stable` view
    // reads every turn after the cursor. With the call's user, a conversation not stored yet reads
    // as a new conversation of that user.
    const readWindow = (conversationId: ConversationId, settings: SummarizationOptions, userId?: UserId) =>
      Effect.map(
        repository.readWindow(conversationId, {
          after: settings.view === "full" ? "system-prefix" : "cursor",
          tokenLimit: settings.tokenBudget,
          digest: digestLimit,
          userId
        }),
        withCurrentSystem
      )

    /**
     * The window of a context and its options: the call's over the conversation's stored settings
     * over the strategy's. The stored settings come with the window, in one read. The window is
     * read again only when they ask for another view or a larger budget, and messages exist.
     */
    const windowFor = (
      conversationId: ConversationId,
      overrides: MemoryManagementStrategy.ContextSettings | undefined
    ) =>
      Effect.gen(function*() {
        const first = withOverrides(settings, overrides)
        const window = yield* readWindow(conversationId, first, overrides?.userId)
        const options = withOverrides(withOverrides(settings, window.settings), overrides)
        const again = window.info.lastSeq > 0 &&
          (options.view !== first.view || options.tokenBudget > first.tokenBudget)
        return { options, window: again ? yield* readWindow(conversationId, options) : window }
      })

    const contextOf = (window: RepositoryService.WindowRead, settings: SummarizationOptions, recall: boolean) =>
      Effect.gen(function*() {
        // `assemble` truncates the summary to make room for the newest turns, or to keep within
        // the budget. Facts are protected and always shown whole.
        const facts = view.showFacts ? window.state.facts : []
        const { preamble, shrink, withoutSummary } = yield* summaryPreamble(shownCounter, window.state, { facts })
        // The user sections take their shares first, as the planner keeps them.
        const user = window.user === null
          ? undefined
          : yield* userSections(shownCounter, window.user, shareRooms(settings))
        const context = yield* assemble(repository, {
          strategy: view.name,
          window,
          preamble,
          budget: settings.tokenBudget - (user?.tokens ?? 0),
          minTurns: settings.kRawTurns,
          shrink,
          withoutSummary,
          coveredUpTo: window.state.cursor,
          announce: (turns) => shownCounter.countMessage({ content: omissionText(turns) }),
          countLabel: shownCounter.count,
          // What the shown turns say is not repeated above them. With a query, recall takes its
          // room from those turns, so the preamble keeps what they hold.
          withoutShown: recall ? undefined : (preamble, turns) => withoutShown(shownCounter, preamble, turns)
        })
        return user === undefined ? context : withUser(context, user, settings.tokenBudget)
      })

    /**
     * Whether a due summarization has not happened: the background is behind. The buffer, every
     * message after the cursor, is grouped into turns as the planner groups it. So "behind" means
     * exactly "the planner has a fold to run"; the context's omitted count would differ. The buffer
     * is read whole only when the window does not hold it.
     */
    const isBehind = (window: RepositoryService.WindowRead, turnsInBuffer: number, settings: SummarizationOptions) =>
      Effect.gen(function*() {
        if (turnsInBuffer <= settings.kRawTurns) return false
        const start = Math.max(window.after, window.state.cursor, window.info.systemPrefixSeq)
        const oldest = window.recent[0]?.seq ?? window.info.lastSeq + 1
        const loaded = window.reachedStart || oldest <= start + 1
          ? window.recent
          : (yield* loadBuffer(repository, window.info.conversationId)).messages
        const buffer = loaded.filter((m) => m.seq > start && m.role !== "summary")
        const turns = groupTurns(buffer).turns
        // Measured as the planner measures it, with a dated context's labels.
        const shown = spansDays(window) ? yield* withLabels(turns, shownCounter.count) : turns
        const due = trigger(settings, producer, {
          summaryTokens: yield* summaryTokens(shownCounter, window.state.narrative),
          tokens: shown.reduce((n, turn) => n + turn.tokenCount, 0),
          messages: buffer.length,
          turns: turns.length,
          systemTokens: window.system.reduce((n, m) => n + m.tokenCount, 0) + userReserve(settings, window.info)
        })
        return due !== undefined
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
        (running) => (running ? jobs.awaitIdle(conversationId) : summarizer.summarizeConversation(conversationId))
      )

    /**
     * The context of `window` in `options`' budget. A summary that is behind either serves the
     * window and triggers a job (`lazyFallback: "window"`), or summarizes and reads again (`"sync"`).
     */
    const policyContext = (
      conversationId: ConversationId,
      window: RepositoryService.WindowRead,
      options: SummarizationOptions,
      recall: boolean
    ) =>
      Effect.gen(function*() {
        const context = yield* contextOf(window, options, recall)
        if (context.turnsOmitted === 0) return context
        const unsummarized = context.turnsShown - context.turnsCovered + context.turnsOmitted
        if (!(yield* isBehind(window, unsummarized, options))) return context
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
        return yield* contextOf(yield* readWindow(conversationId, options), options, recall)
      })

    /**
     * The context of a user's conversation not written yet. It holds what is known about the
     * user, the list of the user's conversations, and with a query, turns recalled from them. The
     * user's sections come with the window read (`WindowQuery.userId`).
     */
    const newConversation = (
      conversationId: ConversationId,
      sections: RepositoryService.UserSections,
      options: SummarizationOptions,
      query: string | undefined,
      stored: ConversationSettings
    ) =>
      Effect.gen(function*() {
        const userId = sections.userId
        const recall = query !== undefined && options.recall !== "off"
        const digestRoom = Math.floor(options.tokenBudget * options.digestTokenBudget)
        const recallRoom = recall ? Math.floor(options.tokenBudget * options.recallTokenBudget) : 0
        const user = yield* userSections(shownCounter, sections, {
          facts: options.tokenBudget - digestRoom - recallRoom,
          digest: digestRoom
        })
        const context = withUser(
          emptyContext(conversationId, view.name, options.tokenBudget, stored),
          user,
          options.tokenBudget
        )
        if (!recall) return context
        return yield* withRecall(repository, shownCounter, conversationId, {
          query,
          budget: options.tokenBudget,
          share: options.recallTokenBudget,
          minTurns: options.kRawTurns,
          limit: recallCandidates,
          source: (before) =>
            userSource(users, userId, conversationId, { before, meaning: hybrid && options.recall === "hybrid" })
        }, Effect.succeed(context)).pipe(
          // A conversation of the user erased meanwhile recalls nothing.
          Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(context))
        )
      })

    return MemoryManagementStrategy.of({
      name: view.name,
      postAddMessagesHook: ({ conversationId, userId }) =>
        userId === null
          ? jobs.trigger(conversationId)
          : Effect.zipRight(jobs.trigger(conversationId), userFacts.trigger(conversationId)),
      buildContext: Effect.fnUntraced(
        function*(conversationId, overrides) {
          const { options, window } = yield* windowFor(conversationId, overrides)
          const query = overrides?.query
          // Not stored yet: a new conversation of the call's user. `info.lastSeq` is 0 only then.
          if (window.info.lastSeq === 0 && window.user !== null) {
            return yield* newConversation(conversationId, window.user, options, query, window.settings)
          }
          if (query === undefined || options.recall === "off") {
            return yield* policyContext(conversationId, window, options, false)
          }
          return yield* withRecall(repository, shownCounter, conversationId, {
            query,
            budget: options.tokenBudget,
            share: options.recallTokenBudget,
            minTurns: options.kRawTurns,
            limit: recallCandidates,
            source: (before) =>
              window.user === null
                ? conversationSource(repository, messageIndex, conversationId, {
                  before,
                  meaning: hybrid && options.recall === "hybrid"
                })
                : userSource(users, window.user.userId, conversationId, {
                  before,
                  meaning: hybrid && options.recall === "hybrid"
                })
          }, policyContext(conversationId, window, options, true))
        },
        // An unknown or cleared conversation has an empty history, not an error. Settings stored
        // before its first message still give its budget. With a user, this runs only when the
        // conversation is deleted between two reads of one context.
        (effect, conversationId, overrides) =>
          Effect.catchTag(effect, "ConversationNotFoundError", () =>
            Effect.flatMap(stored.getSettings(conversationId), (own) => {
              const options = withOverrides(withOverrides(settings, own), overrides)
              const empty = emptyContext(conversationId, view.name, options.tokenBudget, own)
              const userId = overrides?.userId
              return userId === undefined ? Effect.succeed(empty) : Effect.gen(function*() {
                const sections = {
                  userId,
                  facts: yield* users.getFacts(userId),
                  digest: yield* users.listConversations(userId, { limit: digestLimit })
                }
                return yield* newConversation(conversationId, sections, options, overrides?.query, own)
              })
            }))
      ),
      awaitIdle: (conversationId) =>
        Effect.zipRight(jobs.awaitIdle(conversationId), userFacts.awaitIdle(conversationId)),
      forget: (conversationId) =>
        Effect.zipRight(jobs.cancel(conversationId), userFacts.cancel(conversationId)),
      subscribe: PubSub.subscribe(pubsub)
    })
  })

/** Whether the index also searches by meaning. Asked for and missing, it is a configuration mistake. */
const requireHybridIndex = (name: string) =>
  Effect.flatMap(
    Effect.serviceOption(EmbeddingJobs),
    (jobs) =>
      Option.isSome(jobs) ? Effect.succeed(true) : Effect.fail(
        new DataValidationError({
          operation: name === "hierarchical" ? "HierarchicalStrategy.make" : "SummarizationStrategy.make",
          path: "options.recall",
          reason: "\"hybrid\" needs an index that also searches by meaning: provide Recall.layerHybrid over the " +
            "store, with an @effect/ai EmbeddingModel (or ChatMemory.layerLive's `embeddings` option)"
        })
      )
  )
