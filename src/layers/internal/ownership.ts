/**
 * A conversation belongs to the user its first write named. A call naming another user is refused,
 * so nothing of the conversation reaches the caller.
 */
import { Effect } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"
import type { UserId } from "../../domain/UserId.js"
import { DataValidationError } from "../../errors/DataValidationError.js"
import type { RepositoryError } from "../../errors/RepositoryError.js"
import type { RepositoryService } from "../../services/RepositoryService.js"

/** The refusal of `operation`, which named a user the conversation does not belong to. */
export const anotherUser = (operation: string, reason = "the conversation belongs to another user") =>
  new DataValidationError({ operation, path: "options.userId", reason })

/**
 * Refuses `operation` when it names a user and the conversation belongs to another. One read, when
 * a user is named. A conversation not stored belongs to nobody.
 */
export const ownedBy = (repository: RepositoryService.Service) =>
(
  operation: string,
  conversationId: ConversationId,
  userId: UserId | undefined
): Effect.Effect<void, DataValidationError | RepositoryError> =>
  userId === undefined ? Effect.void : repository.getConversation(conversationId).pipe(
    Effect.flatMap((info) =>
      info.userId !== null && info.userId !== userId ? Effect.fail(anotherUser(operation)) : Effect.void
    ),
    Effect.catchTag("ConversationNotFoundError", () => Effect.void)
  )
