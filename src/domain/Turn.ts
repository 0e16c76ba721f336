/**
 * Turns: a user message and everything that answers it. Memory cuts the log only between turns,
 * so a tool call is never separated from its result.
 *
 * @since 0.1.0
 */
import type { Message } from "./Message.js"

/**
 * A turn: consecutive messages of the log, never empty, in seq order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly messages: ReadonlyArray<Message>
  readonly tokenCount: number
  readonly firstSeq: number
  readonly lastSeq: number
}
