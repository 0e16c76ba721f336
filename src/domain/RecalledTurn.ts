/**
 * A recalled turn: an older turn of a conversation brought back for the current question.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { Message } from "./Message.js"

/**
 * One recalled turn: a user message and everything that answered it, tool calls with their
 * results. It comes as stored, with its seq range, time, and the retrieval score that chose it.
 *
 * @since 0.1.0
 * @category schemas
 */
export class RecalledTurn extends Schema.Class<RecalledTurn>("RecalledTurn")({
  /** The conversation it was said in, when that is another of the user's conversations. */
  conversationId: Schema.optional(ConversationId),
  fromSeq: Schema.Int.pipe(Schema.positive()),
  toSeq: Schema.Int.pipe(Schema.positive()),
  /** When its first message was said (its `createdAt`). */
  createdAt: Schema.DateTimeUtc,
  /** How well it matches the query. Higher is better; scores compare within one search only. */
  score: Schema.Number,
  messages: Schema.Array(Message),
  /** Tokens of its messages, as stored. */
  tokenCount: Schema.NonNegativeInt
}) {}
