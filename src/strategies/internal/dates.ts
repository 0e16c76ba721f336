/**
 * The dates of a context: whether its conversation was said on more than one day, and the tokens
 * the labels that then date the user messages shown add to the turns that hold them.
 */
import { Effect } from "effect"
import { recentLabel } from "../../domain/internal/contextText.js"
import { onDifferentDays } from "../../domain/internal/transcript.js"
import type { Message } from "../../domain/Message.js"
import type { Turn } from "../../domain/Turn.js"
import type { RepositoryService } from "../../services/RepositoryService.js"

/** The newest message of `messages` that is part of the conversation (not a summary record). */
const newest = (messages: ReadonlyArray<Message>): Message | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message !== undefined && message.role !== "summary") return message
  }
  return undefined
}

/**
 * Whether the conversation a window reads was said on more than one day: its first message (when
 * the conversation started, `ConversationInfo.createdAt`) and its last one fall on different dates
 * (UTC). The window holds the newest messages; when it holds none after the leading system
 * messages (every turn summarized, in the `stable` view), the time of the last write stands in for
 * the last message: dates shown once too often rather than missing.
 */
export const spansDays = (window: RepositoryService.WindowRead): boolean => {
  const { info } = window
  const last = newest(window.recent)?.createdAt ??
    (info.lastSeq === info.systemPrefixSeq ? newest(window.system)?.createdAt : info.updatedAt)
  return last !== undefined && onDifferentDays(info.createdAt, last)
}

/**
 * `turns` with the tokens of their labels in their counts: one `recentLabel` per user
 * message, counted by `count`.
 */
export const withLabels = (
  turns: ReadonlyArray<Turn>,
  count: (text: string) => Effect.Effect<number>
): Effect.Effect<Array<Turn>> =>
  Effect.forEach(turns, (turn) =>
    Effect.map(
      Effect.reduce(
        turn.messages,
        0,
        (tokens, message) =>
          message.role === "user" ? Effect.map(count(recentLabel(message)), (n) => tokens + n) : Effect.succeed(tokens)
      ),
      (tokens): Turn => (tokens === 0 ? turn : { ...turn, tokenCount: turn.tokenCount + tokens })
    ))
