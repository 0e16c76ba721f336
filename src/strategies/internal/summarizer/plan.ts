/**
 * When to summarize and what: the trigger on the summary and buffer sizes, and the split of the
 * buffer at a turn boundary into the part to fold now and the tail kept verbatim.
 */
import { Effect, Option } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { summaryText } from "../../../domain/MemoryContext.js"
import type { Message } from "../../../domain/Message.js"
import type { SummaryState } from "../../../domain/SummaryState.js"
import { groupTurns, newestThatFit, type Turn } from "../../../domain/Turn.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"

/** The knobs the trigger and the split read. */
export interface PlanSettings {
  /** Turns always kept verbatim after the summary (at least 1). */
  readonly kRawTurns: number
  readonly promptTokenBudget: number
  /** Summary + buffer tokens above which a summarization is due. */
  readonly chunkSummarizeThreshold: number
  readonly summaryTokenCap: number
  /** Also due when the buffer holds more than `threshold` messages; then it keeps about `target`. */
  readonly messageTrigger?: { readonly threshold: number; readonly target: number } | undefined
  /** The most tokens of turns one summarizer call reads. */
  readonly summarizerInputLimit: number
  /** Whether the existing summary is part of each call's input (incremental mode). */
  readonly foldsExistingSummary: boolean
  /** Whether one run may take more than `summarizerInputLimit` (the producer chunks the input itself). */
  readonly chunksItself: boolean
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

/** Tokens the summary of a state takes as the system message that carries it. */
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

/** Decides whether a summarization is due, and splits the buffer when it is. */
export const plan = (
  repository: RepositoryService.Service,
  counter: TokenCounter.Service,
  settings: PlanSettings,
  conversationId: ConversationId
) =>
  Effect.gen(function*() {
    const { messages, window } = yield* loadBuffer(repository, conversationId)
    const turns = groupTurns(messages).turns
    const currentSummary = yield* summaryTokens(counter, window.state.narrative)
    const bufferTokens = sum(turns, (turn) => turn.tokenCount)
    const bufferMessages = sum(turns, (turn) => turn.messages.length)
    const byTokens = currentSummary + bufferTokens > settings.chunkSummarizeThreshold
    const trigger = settings.messageTrigger
    const byCount = trigger !== undefined && bufferMessages > trigger.threshold
    if (!(byTokens || byCount) || turns.length <= settings.kRawTurns) return Option.none<Plan>()

    const systemTokens = window.system.reduce((n, message) => n + message.tokenCount, 0)
    let tail: number
    if (byCount && !byTokens && trigger !== undefined) {
      let kept = 0
      let count = 0
      for (let i = turns.length - 1; i >= 0; i--) {
        kept += turns[i]?.messages.length ?? 0
        if (kept > trigger.target) break
        count += 1
      }
      tail = count
    } else {
      // Keep verbatim what the prompt can show next to a full summary; fold the rest.
      tail = newestThatFit(turns, Math.max(0, settings.promptTokenBudget - settings.summaryTokenCap - systemTokens))
    }
    tail = Math.max(settings.kRawTurns, tail)
    if (tail >= turns.length) tail = settings.kRawTurns
    const candidates = turns.slice(0, turns.length - tail)
    const older = settings.chunksItself ? candidates : takeWithin(
      candidates,
      settings.summarizerInputLimit - (settings.foldsExistingSummary ? currentSummary : 0)
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

/** The oldest turns whose tokens fit `limit` together; at least one, so that a run progresses. */
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

/** Splits turns into consecutive chunks of at most `limit` tokens (a larger turn is a chunk alone). */
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
