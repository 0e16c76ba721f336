/**
 * The errors the public `ChatMemoryService` fails with.
 *
 * @since 0.1.0
 */
import type { ConversationNotFoundError } from "./ConversationNotFoundError.js"
import type { DataValidationError } from "./DataValidationError.js"
import type { RepositoryError } from "./RepositoryError.js"

/**
 * Every error a `ChatMemoryService` method can fail with. Model failures never appear here:
 * they happen in the background or degrade the context instead.
 *
 * @since 0.1.0
 * @category errors
 */
export type ChatMemoryError =
  | DataValidationError
  | ConversationNotFoundError
  | RepositoryError
