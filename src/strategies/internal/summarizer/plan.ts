/**
 * When to summarize and what. The trigger reads the summary and buffer sizes. The buffer splits
 * at a turn boundary into the part to fold now and the tail kept verbatim.
 */
import { Effect, Option } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { summaryText } from "../../../domain/internal/contextText.js"
import { withOverrides } from "../../../domain/internal/overrides.js"
import { groupTurns } from "../../../domain/internal/turns.js"
import type { Message } from "../../../domain/Message.js"
import type { SummaryState } from "../../../domain/SummaryState.js"
import { type Turn } from "../../../domain/Turn.js"
import { RepositoryService } from "../../../services/RepositoryService.js"
import { SettingsStore } from "../../../services/SettingsStore.js"
import { TokenCounter } from "../../../services/TokenCounter.js"
import { userReserve } from "../context/user.js"
import { spansDays, withLabels } from "../dates.js"
import type { SummarizationOptions } from "../options.js"
import { newestThatFit } from "../turns.js"

/** What the planner must know of the producer that will fold the turns. */
export interface Traits {
  /** Tokens the preamble (summary and facts) may take. The verbatim tail must fit beside it. */
  readonly preambleCap: number
  /** Whether the existing summary is in each call's input, and so counts against its limit. */
  readonly foldsExistingSummary: boolean
  /** Whether one run may take more than `summarizerInputLimit`, as the producer chunks its input. */
  readonly chunksItself: boolean
}

/** The size of a buffer, as the trigger reads it. */
export interface BufferSize {
  /** Tokens the current summary takes in a prompt. */
  readonly summaryTokens: number
  readonly tokens: number
  readonly messages: number
  readonly turns: number
  /** Tokens of the leading system messages. */
  readonly systemTokens: number
}

/** The tokens turns may take in a context: the budget less the system messages and a full preamble. */
export const roomFor = (settings: SummarizationOptions, traits: Traits, systemTokens: number): number =>
  Math.max(0, settings.tokenBudget - traits.preambleCap - systemTokens)

/**
 * The trigger: whether a summarization is due for a buffer of this size, and by which test.
 * - Watermarks, the default: the buffer past `highWater × room`, or past `lowWater × room` for a
 *   run that continues a fold.
 * - An explicit `chunkSummarizeThreshold`: the summary and buffer tokens past it.
 * - By count: the buffer's messages past the message trigger.
 * Never while the buffer holds K turns or fewer.
 */
export const trigger = (
  settings: SummarizationOptions,
  traits: Traits,
  buffer: BufferSize,
  continuing = false
): { readonly byTokens: boolean; readonly byCount: boolean } | undefined => {
  if (buffer.turns <= settings.kRawTurns) return undefined
  const byTokens = settings.chunkSummarizeThreshold !== undefined
    ? buffer.summaryTokens + buffer.tokens > settings.chunkSummarizeThreshold
    : buffer.tokens >
      (continuing ? settings.lowWater : settings.highWater) * roomFor(settings, traits, buffer.systemTokens)
  const byCount = settings.messageTrigger !== undefined && buffer.messages > settings.messageTrigger.threshold
  return byTokens || byCount ? { byTokens, byCount } : undefined
}

/** A summarization that is due: the state it starts from and the turns to fold now. */
export interface Plan {
  readonly conversationId: ConversationId
  readonly info: RepositoryService.ConversationInfo
  readonly state: SummaryState
  readonly system: ReadonlyArray<Message>
  /** Tokens the summary takes in a prompt now. */
  readonly summaryTokens: number
  /** Tokens of the buffer (messages after the cursor). */
  readonly bufferTokens: number
  /** The oldest turns of the buffer, to fold into the summary now. */
  readonly older: ReadonlyArray<Turn>
  /** Turns of the buffer kept verbatim after this run. */
  readonly tailTurns: number
}

/** Tokens a state's summary takes as the message that carries it. */
export const summaryTokens = (counter: TokenCounter.Service, narrative: string): Effect.Effect<number> =>
  narrative.length === 0 ? Effect.succeed(0) : counter.countMessage({ content: summaryText(narrative) })

const sum = (turns: ReadonlyArray<Turn>, f: (turn: Turn) => number) => turns.reduce((n, turn) => n + f(turn), 0)

/** The buffer's turns: every message after the cursor and the leading system messages. */
export const loadBuffer = (repository: RepositoryService.Service, conversationId: ConversationId) =>
  Effect.gen(function*() {
    const window = yield* repository.readWindow(conversationId, {
      after: "cursor",
      tokenLimit: Number.MAX_SAFE_INTEGER
    })
    const oldest = window.recent[0]
    const rest = window.reachedStart || oldest === undefined
      ? []
      : yield* repository.listMessages(conversationId, { after: window.after, before: oldest.seq })
    return { window, messages: [...rest, ...window.recent] }
  })

/**
 * The planner: decides whether a summarization is due, and splits the buffer when it is. The log,
 * the settings and the counter are taken once, here.
 */
export const makePlanner = (
  settings: SummarizationOptions,
  traits: Traits
): Effect.Effect<
  (conversationId: ConversationId, continuing: boolean) => Effect.Effect<Option.Option<Plan>, RepositoryService.Errors>,
  never,
  RepositoryService | SettingsStore | TokenCounter
> =>
  Effect.gen(function*() {
    const repository = yield* RepositoryService
    const stored = yield* SettingsStore
    const counter = yield* TokenCounter
    return (conversationId, continuing) =>
      plan(repository, stored, counter, settings, traits, conversationId, continuing)
  })

const plan = (
  repository: RepositoryService.Service,
  stored: SettingsStore.Service,
  counter: TokenCounter.Service,
  defaults: SummarizationOptions,
  traits: Traits,
  conversationId: ConversationId,
  continuing: boolean
) =>
  Effect.gen(function*() {
    const { messages, window } = yield* loadBuffer(repository, conversationId)
    // The conversation's own budget and K, when it has them, decide what is due and what stays.
    const settings = withOverrides(defaults, yield* stored.getSettings(conversationId))
    // A conversation of a user keeps the room of the user sections, as its contexts show them.
    const systemTokens = window.system.reduce((n, message) => n + message.tokenCount, 0) +
      userReserve(settings, window.info)
    const turns = groupTurns(messages).turns
    // A dated context labels each user message it shows, so turns are measured with the labels.
    const shown = spansDays(window) ? yield* withLabels(turns, counter.count) : turns
    const currentSummary = yield* summaryTokens(counter, window.state.narrative)
    const bufferTokens = sum(turns, (turn) => turn.tokenCount)
    const due = trigger(settings, traits, {
      summaryTokens: currentSummary,
      tokens: sum(shown, (turn) => turn.tokenCount),
      messages: sum(turns, (turn) => turn.messages.length),
      turns: turns.length,
      systemTokens
    }, continuing)
    if (due === undefined) return Option.none<Plan>()

    const room = roomFor(settings, traits, systemTokens)
    let tail: number
    const byMessages = settings.messageTrigger
    if (due.byCount && !due.byTokens && byMessages !== undefined) {
      let kept = 0
      let count = 0
      for (let i = turns.length - 1; i >= 0; i--) {
        kept += turns[i]?.messages.length ?? 0
        if (kept > byMessages.target) break
        count += 1
      }
      tail = count
    } else if (settings.chunkSummarizeThreshold === undefined) {
      // Watermarks: fold the oldest turns until what stays unsummarized fits `lowWater × room`.
      tail = newestThatFit(shown, settings.lowWater * room)
    } else {
      // The explicit threshold: keep verbatim what the prompt can show next to a full summary.
      // When all of it fits there, fold down to the low watermark, never below it.
      tail = newestThatFit(shown, room)
      if (tail >= turns.length) tail = newestThatFit(shown, settings.lowWater * room)
    }
    tail = Math.max(settings.kRawTurns, tail)
    if (tail >= turns.length) {
      // Only the message-count trigger folds down to K; a token trigger never goes below its floor.
      if (!due.byCount) return Option.none<Plan>()
      tail = settings.kRawTurns
    }
    const candidates = turns.slice(0, turns.length - tail)
    const older = traits.chunksItself ? candidates : takeWithin(
      candidates,
      settings.summarizerInputLimit - (traits.foldsExistingSummary ? currentSummary : 0)
    )
    return Option.some<Plan>({
      conversationId,
      info: window.info,
      state: window.state,
      system: window.system,
      summaryTokens: currentSummary,
      bufferTokens,
      older,
      tailTurns: turns.length - older.length
    })
  })

/** The oldest turns that fit `limit` together; at least one, so a run progresses. */
export const takeWithin = (turns: ReadonlyArray<Turn>, limit: number): ReadonlyArray<Turn> => {
  let used = 0
  let count = 0
  for (const turn of turns) {
    used += turn.tokenCount
    if (used > limit && count > 0) break
    count += 1
  }
  return turns.slice(0, count)
}

/** Splits turns into consecutive chunks of at most `limit` tokens. A larger turn is a chunk alone. */
export const chunkTurns = (turns: ReadonlyArray<Turn>, limit: number): ReadonlyArray<ReadonlyArray<Turn>> => {
  const chunks: Array<ReadonlyArray<Turn>> = []
  let rest = turns
  while (rest.length > 0) {
    const chunk = takeWithin(rest, limit)
    chunks.push(chunk)
    rest = rest.slice(chunk.length)
  }
  return chunks
}
