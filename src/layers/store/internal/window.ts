/**
 * The shape of a window read, shared by the stores: where it starts (the newest messages that hold
 * more than the token limit, back to a user message), how many rows a store that pays a round trip
 * per read takes at once, and how a read that fell short is completed.
 */
import { Effect } from "effect"
import type { Message } from "../../../domain/Message.js"

/**
 * How many of the newest messages a store that pays a round trip per read takes in one window
 * read: enough to hold `tokenLimit` tokens twice over at the conversation's mean message size, so
 * one read nearly always suffices, yet bounded by the budget, not by the length of the history.
 * The SQL stores compute it in the statement (`chat_memory_read_window`, with the same float8
 * arithmetic) and send only what holds the limit.
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
   * Whether the messages from `index` hold more than the token limit and start at a user message;
   * otherwise the messages ran out first, and `index` is the first of them.
   */
  readonly complete: boolean
}

/**
 * Where the window starts among the messages at indexes `[start, end)` (ascending by seq): going
 * back from the newest until more than `tokenLimit` tokens are held (summary messages aside), then
 * on back to a user message, where a turn may start.
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
 * Completes a window read that holds too little (its first page fell short of the limit, as a
 * page sized by the mean message can when the newest messages are small): earlier messages are
 * read a page at a time (each twice as large, by `page`, newest first) until the window holds the
 * limit back to a user message or reaches the start of its range. A read that holds enough is
 * returned as it is, at no cost.
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
