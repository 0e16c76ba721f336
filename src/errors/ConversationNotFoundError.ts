/**
 * A conversation that does not exist (never written, or cleared).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * No conversation with this id is stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversationNotFoundError extends Schema.TaggedError<ConversationNotFoundError>()(
  "ConversationNotFoundError",
  { conversationId: Schema.String }
) {
  override get message(): string {
    return `Conversation not found: ${JSON.stringify(this.conversationId)}`
  }
}
