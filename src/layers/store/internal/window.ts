/**
 * The window read the stores share. A window is the newest messages holding more than the token
 * limit, back to a user message. This module sizes a round-trip store's first read and completes a
 * read that fell short.
 */
import { Effect } from "effect"
import type { Message } from "../../../domain/Message.js"

/**
 * How many of the newest messages a round-trip store takes in one window read. At the
 * conversation's mean message size, that holds `tokenLimit` twice over, so one read nearly always
 * suffices. It is bounded by the budget, not the history's length. The SQL stores compute it in
 * `chat_memory_read_window` with the same float8 arithmetic, and send only what holds the limit.
 */
export const windowPageSize = (
  info: { readonly messageCount: number; readonly tokenCount: number },
  tokenLimit: number
): number => {
  const meanTokens = info.messageCount === 0 ? 1 : Math.max(1, info.tokenCount / info.messageCount)
  return Math.min(10_000, Math.max(32, Math.ceil((2 * Math.max(0, tokenLimit)) / meanTokens) + 16))
}

/** Where a window starts among messages, and whether they held enough for it. */
export interface WindowStart {
  /** The index of the window's first message. */
  readonly index: number
  /**
   * Whether the messages from `index` hold more than the token limit and start at a user message.
   * If not, the messages ran out first and `index` is the first of them.
   */
  readonly complete: boolean
}

/**
 * Where the window starts among the messages at `[start, end)`, ascending by seq. It goes back from
 * the newest until more than `tokenLimit` tokens are held, not counting summary messages. It then
 * goes on back to a user message, where a turn may start.
 */
export const windowStart = (
  at: (index: number) => Message | undefined,
  start: number,
  end: number,
  tokenLimit: number
): WindowStart => {
  let first = end
  let tokens = 0
  while (first > start && tokens <= tokenLimit) {
    first -= 1
    const message = at(first)
    if (message !== undefined && message.role !== "summary") tokens += message.tokenCount
  }
  while (first > start && at(first)?.role !== "user") first -= 1
  return { index: first, complete: tokens > tokenLimit && at(first)?.role === "user" }
}

/**
 * Completes a window read whose first page fell short of the limit, as a page sized by the mean
 * message does when the newest messages are small. Earlier messages are read by `page`, newest
 * first, each page twice as large. This stops once the window holds the limit back to a user
 * message, or reaches its range's start. A read that holds enough returns as it is, at no cost.
 */
export const completeWindow = <E>(
  read: { readonly recent: ReadonlyArray<Message>; readonly reachedStart: boolean },
  tokenLimit: number,
  page: (before: number, limit: number) => Effect.Effect<ReadonlyArray<Message>, E>
): Effect.Effect<{ readonly recent: ReadonlyArray<Message>; readonly reachedStart: boolean }, E> =>
  Effect.gen(function*() {
    if (read.reachedStart) return read
    let recent = read.recent
    let reachedStart = false
    let pageSize = Math.max(32, recent.length)
    while (true) {
      const cut = windowStart((i) => recent[i], 0, recent.length, tokenLimit)
      if (cut.complete) {
        return cut.index === 0
          ? { recent, reachedStart }
          : { recent: recent.slice(cut.index), reachedStart: false }
      }
      const oldest = recent[0]
      if (reachedStart || oldest === undefined) return { recent, reachedStart }
      pageSize *= 2
      const earlier = yield* page(oldest.seq, pageSize)
      recent = [...earlier, ...recent]
      reachedStart = earlier.length < pageSize
    }
  })
