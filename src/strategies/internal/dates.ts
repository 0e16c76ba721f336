/**
 * The dates of a context: whether its conversation spans more than one day. If so, user messages
 * shown get date labels, whose tokens count with their turns.
 */
import { Effect } from "effect"
import { recentLabel } from "../../domain/internal/contextText.js"
import { onDifferentDays } from "../../domain/internal/transcript.js"
import type { Message } from "../../domain/Message.js"
import type { Turn } from "../../domain/Turn.js"
import type { RepositoryService } from "../../services/RepositoryService.js"

/** The newest message of `messages` that is not a summary record. */
const newest = (messages: ReadonlyArray<Message>): Message | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message !== undefined && message.role !== "summary") return message
  }
  return undefined
}

/**
 * Whether a window's conversation spans more than one day: its start
 * (`ConversationInfo.createdAt`) and its last message fall on different UTC dates. When the window
 * holds no message after the leading system ones, the last write's time stands in. Dates are
 * better shown once too often than missing.
 */
export const spansDays = (window: RepositoryService.WindowRead): boolean => {
  const { info } = window
  const last = newest(window.recent)?.createdAt ??
    (info.lastSeq === info.systemPrefixSeq ? newest(window.system)?.createdAt : info.updatedAt)
  return last !== undefined && onDifferentDays(info.createdAt, last)
}

/** `turns` with their labels' tokens in their counts: one `recentLabel` per user message. */
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
