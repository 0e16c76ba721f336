/**
 * Reading a conversation's newest turns without its whole history, and assembling a context.
 * A context holds protected messages, an optional summary and facts, and the newest turns that fit.
 */
import { Effect, Queue } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import type { ConversationSettings } from "../../../domain/ConversationSettings.js"
import type { Fact } from "../../../domain/Fact.js"
import { groupTurns, messagesOf } from "../../../domain/internal/turns.js"
import { MemoryContext } from "../../../domain/MemoryContext.js"
import type { MemoryEvent } from "../../../domain/MemoryEvent.js"
import { Message } from "../../../domain/Message.js"
import { type Turn } from "../../../domain/Turn.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import { spansDays, withLabels } from "../dates.js"
import { newestThatFit } from "../turns.js"

/** Newest complete turns of a range, oldest first. */
export interface RecentTurns {
  readonly turns: ReadonlyArray<Turn>
  /** Every message read, oldest first: a suffix of the range that holds `turns`. */
  readonly loaded: ReadonlyArray<Message>
  /** Whether `turns` start at the beginning of the range, nothing older left unread. */
  readonly reachedStart: boolean
}

const sumTokens = (turns: ReadonlyArray<Turn>): number => turns.reduce((sum, turn) => sum + turn.tokenCount, 0)

/**
 * The complete turns of the window's range. Until they hold `available` tokens, further pages are
 * read backwards, each twice as large. The cost depends on the budget, not the history's length.
 */
export const loadRecentTurns = (
  repository: RepositoryService.Service,
  window: RepositoryService.WindowRead,
  available: number
) =>
  Effect.gen(function*() {
    let loaded = window.recent
    let reachedStart = window.reachedStart
    let pageSize = Math.max(32, loaded.length)
    while (true) {
      const grouped = groupTurns(loaded, { partial: !reachedStart })
      const turns = grouped.firstTurnComplete ? grouped.turns : grouped.turns.slice(1)
      const oldest: Message | undefined = loaded[0]
      if (reachedStart || oldest === undefined || sumTokens(turns) > available) {
        return { turns, loaded, reachedStart } satisfies RecentTurns
      }
      pageSize *= 2
      const page: ReadonlyArray<Message> = yield* repository.listMessages(window.info.conversationId, {
        after: window.after,
        before: oldest.seq,
        limit: pageSize,
        from: "newest"
      })
      loaded = [...page, ...loaded]
      reachedStart = page.length < pageSize
    }
  })

/** What a strategy puts in front of the recent turns. */
export interface Preamble {
  readonly facts: ReadonlyArray<Fact>
  /** The summary as shown, or null for none. */
  readonly summary: string | null
  /** Tokens the facts and summary blocks take. */
  readonly tokens: number
  readonly summaryTruncated: boolean
  /** The highest seq the summary covers (0 for none). */
  readonly summarizedUpTo: number
}

/** No facts, no summary. */
export const emptyPreamble: Preamble = {
  facts: [],
  summary: null,
  tokens: 0,
  summaryTruncated: false,
  summarizedUpTo: 0
}

/** Omitted turns and messages: neither shown nor covered by the summary. */
interface Omitted {
  readonly turns: number
  readonly messages: number
}

/**
 * Counts what a context leaves out: the range `(after, firstShownSeq)`. It uses the messages read
 * when they reach back to `after`. From the leading system messages, it uses the conversation's
 * counters, so a long history is not scanned. Otherwise it counts the range, which then lies
 * within the unsummarized buffer.
 */
const countOmitted = (
  repository: RepositoryService.Service,
  info: RepositoryService.ConversationInfo,
  recent: RecentTurns,
  shownCount: number,
  after: number
): Effect.Effect<Omitted, RepositoryService.Errors> => {
  const firstShownSeq = recent.turns[recent.turns.length - shownCount]?.firstSeq ?? info.lastSeq + 1
  if (firstShownSeq <= after + 1) return Effect.succeed({ turns: 0, messages: 0 })
  const omittedTurns = recent.turns.slice(0, recent.turns.length - shownCount).filter((turn) => turn.firstSeq > after)
  const oldestLoaded = recent.turns[0]?.firstSeq ?? info.lastSeq + 1
  if (recent.reachedStart || oldestLoaded <= after + 1) {
    return Effect.succeed({ turns: omittedTurns.length, messages: sumMessages(omittedTurns) })
  }
  if (after === info.systemPrefixSeq) {
    let laterMessages = 0
    let laterUsers = 0
    for (const message of recent.loaded) {
      if (message.seq < firstShownSeq || message.role === "summary") continue
      laterMessages += 1
      if (message.role === "user") laterUsers += 1
    }
    const messages = info.messageCount - info.roleCounts.summary - info.systemPrefixSeq - laterMessages
    const users = info.roleCounts.user - laterUsers
    if (messages === 0) return Effect.succeed({ turns: 0, messages: 0 })
    // Only the first turn may open with something other than a user message, such as a greeting.
    const opensWithUser = info.firstTurnRole === null || info.firstTurnRole === "user"
    return Effect.succeed({ turns: users + (opensWithUser ? 0 : 1), messages })
  }
  return Effect.map(
    repository.countMessages(info.conversationId, { after, before: firstShownSeq }),
    (counts) => ({ turns: counts.user, messages: counts.total - counts.summary })
  )
}

/**
 * The window with the current system prompt (the last of `ConversationSettings.systemPrompts`) in
 * place of its leading system messages. That one message takes the seq of the last leading one,
 * or 1, and the time the prompt was given.
 */
export const withCurrentSystem = <W extends RepositoryService.WindowRead>(window: W): W => {
  const message = currentSystem(window.info.conversationId, window.settings, window.info.systemPrefixSeq)
  return message === undefined ? window : { ...window, system: [message] }
}

/** The current system prompt of the settings as the system message, at `seq` (1 at least). */
const currentSystem = (conversationId: ConversationId, settings: ConversationSettings, seq: number) => {
  const current = settings.systemPrompts?.at(-1)
  return current === undefined ? undefined : new Message({
    conversationId,
    seq: Math.max(1, seq),
    role: "system",
    content: current.text,
    metadata: {},
    tokenCount: current.tokenCount,
    createdAt: current.since
  }, { disableValidation: true })
}

/**
 * Assembles a context: the leading system messages, the preamble (facts and summary), then the
 * newest turns that fit what the budget leaves. Without a budget, all turns are shown. When the
 * newest `minTurns` turns fit the budget but not beside the preamble, `shrink` truncates the
 * summary to leave them room. When they do not fit at all, the preamble alone must fit the budget.
 */
export const assemble = (
  repository: RepositoryService.Service,
  options: {
    readonly strategy: string
    readonly window: RepositoryService.WindowRead
    readonly preamble: Preamble
    readonly budget: number | null
    readonly minTurns?: number | undefined
    readonly shrink?: ((maxTokens: number) => Effect.Effect<Preamble>) | undefined
    /**
     * Turns up to this seq are covered by the summary, so never omitted. The `full` view reads
     * from the system prefix and shows covered turns when they fit.
     */
    readonly coveredUpTo?: number | undefined
    /**
     * The tokens of the notice that tells the model `turns` turns are omitted (`omissionText`).
     * When given, a context that omits turns says so within the budget, never leaving a silent gap.
     */
    readonly announce?: ((turns: number) => Effect.Effect<number>) | undefined
    /**
     * The preamble without the summary. When every turn fits beside it, the summary only repeats
     * shown turns, so it is left out.
     */
    readonly withoutSummary?: Preamble | undefined
    /**
     * Counts a label's tokens. When given, a conversation over several days (`dates.spansDays`)
     * gets a dated context. Each user message shown is labelled with its date and time
     * (`recentLabel`), counted with its turn.
     */
    readonly countLabel?: ((label: string) => Effect.Effect<number>) | undefined
    /**
     * A preamble without what the given covered turns, shown verbatim, already hold. When it is
     * smaller, the room goes to more turns, and the turns then shown are asked again. That happens
     * at most three times; each round shows at least the turns before.
     */
    readonly withoutShown?: ((preamble: Preamble, shown: ReadonlyArray<Turn>) => Effect.Effect<Preamble>) | undefined
  }
) =>
  Effect.gen(function*() {
    const { window } = options
    const { info, system } = window
    let preamble = options.preamble
    const systemTokens = system.reduce((sum, message) => sum + message.tokenCount, 0)
    const room = options.budget === null ? Number.POSITIVE_INFINITY : Math.max(0, options.budget - systemTokens)
    const loaded = yield* loadRecentTurns(repository, window, room)
    const countLabel = options.countLabel !== undefined && spansDays(window) ? options.countLabel : undefined
    const recent = countLabel === undefined ? loaded : { ...loaded, turns: yield* withLabels(loaded.turns, countLabel) }
    if (
      options.withoutSummary !== undefined && preamble.summary !== null && recent.reachedStart &&
      window.after <= info.systemPrefixSeq &&
      // Every message since the system prefix is still stored, none pruned …
      recent.loaded.length === info.lastSeq - info.systemPrefixSeq &&
      // … and fits beside the rest.
      sumTokens(recent.turns) <= room - options.withoutSummary.tokens
    ) {
      preamble = options.withoutSummary
    }
    const minTurns = Math.min(options.minTurns ?? 0, recent.turns.length)
    const minTokens = sumTokens(recent.turns.slice(recent.turns.length - minTurns))
    if (options.shrink !== undefined && minTokens <= room && minTokens > room - preamble.tokens) {
      preamble = yield* options.shrink(room - minTokens)
    } else if (options.shrink !== undefined && preamble.tokens > room) {
      // Not even the newest turns fit: the preamble alone must keep within the budget.
      preamble = yield* options.shrink(room)
    }
    const available = Math.max(0, room - preamble.tokens)
    const omittedAfter = Math.max(window.after, options.coveredUpTo ?? 0)
    let shownCount = newestThatFit(recent.turns, available)
    let omitted = yield* countOmitted(repository, info, recent, shownCount, omittedAfter)
    let noticeTokens = 0
    if (omitted.turns > 0 && options.announce !== undefined) {
      // The notice takes room from the oldest turns shown, and one turn fewer omits one more.
      // So the count and the notice settle together. When the notice does not fit, or would push
      // out the newest `minTurns` turns, the turns win. The omission is still logged and in the event.
      for (let attempt = 0; attempt < 3; attempt++) {
        const tokens = yield* options.announce(omitted.turns)
        const fitting = newestThatFit(recent.turns, available - tokens)
        if (tokens > available || fitting < Math.min(minTurns, shownCount)) {
          noticeTokens = 0
          break
        }
        noticeTokens = tokens
        if (fitting === shownCount) break
        shownCount = fitting
        omitted = yield* countOmitted(repository, info, recent, shownCount, omittedAfter)
      }
    }
    let shown = recent.turns.slice(recent.turns.length - shownCount)
    // Never over the budget for the notice: the loop above may stop unsettled.
    if (sumTokens(shown) + noticeTokens > available) noticeTokens = 0
    // A shown turn the summary covers means nothing is omitted. What the preamble repeats of the
    // shown turns gives its room to older turns, and nothing is omitted then either.
    if (options.withoutShown !== undefined && !preamble.summaryTruncated && omitted.turns === 0) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const covered = shown.filter((turn) => turn.lastSeq <= (options.coveredUpTo ?? 0))
        if (covered.length === 0) break
        const lighter = yield* options.withoutShown(preamble, covered)
        if (lighter.tokens >= preamble.tokens) break
        preamble = lighter
        shownCount = newestThatFit(recent.turns, Math.max(0, room - preamble.tokens))
        shown = recent.turns.slice(recent.turns.length - shownCount)
      }
    }
    const tokenCount = systemTokens + preamble.tokens + noticeTokens + sumTokens(shown)
    if (preamble.summaryTruncated) {
      yield* Effect.logDebug("summary truncated to make room for the newest turns").pipe(
        Effect.annotateLogs({ conversationId: info.conversationId, summaryTokens: preamble.tokens, minTurns })
      )
    }
    if (options.budget !== null && tokenCount > options.budget) {
      yield* Effect.logWarning("the protected part of the context exceeds the token budget").pipe(
        Effect.annotateLogs({ conversationId: info.conversationId, tokenCount, budget: options.budget })
      )
    }
    return new MemoryContext({
      conversationId: info.conversationId,
      userId: info.userId,
      strategy: options.strategy,
      system,
      facts: preamble.facts,
      summary: preamble.summary,
      recent: messagesOf(shown),
      tokenCount,
      tokenBudget: options.budget,
      turnsShown: shownCount,
      turnsCovered: shown.filter((turn) => turn.lastSeq <= (options.coveredUpTo ?? 0)).length,
      turnsOmitted: omitted.turns,
      omissionAnnounced: omitted.turns > 0 && noticeTokens > 0,
      messagesOmitted: omitted.messages,
      summaryTruncated: preamble.summaryTruncated,
      summarizedUpTo: preamble.summarizedUpTo,
      dated: countLabel !== undefined
    }, { disableValidation: true })
  })

/**
 * The context of a conversation that holds nothing, never written or cleared. An empty history is
 * not an error, so a conversation's first turn can ask for its context like any other. A system
 * prompt set before the first message (`settings`) is its system message.
 */
export const emptyContext = (
  conversationId: RepositoryService.ConversationInfo["conversationId"],
  strategy: string,
  budget: number | null,
  settings?: ConversationSettings
): MemoryContext => {
  const system = settings === undefined ? undefined : currentSystem(conversationId, settings, 1)
  return new MemoryContext({
    conversationId,
    strategy,
    system: system === undefined ? [] : [system],
    facts: [],
    summary: null,
    recent: [],
    tokenCount: system?.tokenCount ?? 0,
    tokenBudget: budget,
    turnsShown: 0,
    turnsOmitted: 0,
    messagesOmitted: 0,
    summaryTruncated: false,
    summarizedUpTo: 0
  }, { disableValidation: true })
}

const sumMessages = (turns: ReadonlyArray<Turn>): number => turns.reduce((sum, turn) => sum + turn.messages.length, 0)

/** The event subscription of a strategy that emits none. */
export const noEvents = Effect.acquireRelease(Queue.unbounded<MemoryEvent>(), Queue.shutdown)
