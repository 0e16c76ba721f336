/**
 * One conversation of a user, as a list shows it: its dates, its length and what it was about.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { UserId } from "./UserId.js"

/**
 * A conversation of a user: its id, when its first and latest messages were said (`createdAt`),
 * its message count, and what it was about.
 *
 * @since 0.2.0
 * @category schemas
 */
export class ConversationEntry extends Schema.Class<ConversationEntry>("ConversationEntry")({
  conversationId: ConversationId,
  userId: UserId,
  startedAt: Schema.DateTimeUtc,
  lastSaidAt: Schema.DateTimeUtc,
  messageCount: Schema.NonNegativeInt,
  /** The start of its first user message, at most 200 characters. Empty when it has none. */
  about: Schema.String
}) {}
