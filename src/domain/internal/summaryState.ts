/**
 * A conversation's summary state before any summarization.
 */
import type { ConversationId } from "../ConversationId.js"
import { SummaryState } from "../SummaryState.js"

/**
 * The state of a conversation nothing has been summarized of yet.
 */
export const initial = (conversationId: ConversationId): SummaryState =>
  new SummaryState({ conversationId, narrative: "", facts: [], layers: [], cursor: 0, version: 0, updatedAt: null })
