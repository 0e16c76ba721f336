/**
 * The SQL store's error mapping at its ports' edge. Driver and row schema failures become a
 * `RepositoryError` naming the operation and the conversation.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult } from "effect"
import { RepositoryError } from "../../../../errors/RepositoryError.js"

/** The `catchTags` handlers of an operation on one conversation. */
export const storeErrors = (operation: string, conversationId: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, conversationId, cause })),
  ParseError: (cause: ParseResult.ParseError) => Effect.fail(new RepositoryError({ operation, conversationId, cause }))
})

/** As `storeErrors`, naming an undecodable settings row in the detail. */
export const settingsErrors = (operation: string, conversationId: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, conversationId, cause })),
  ParseError: (cause: ParseResult.ParseError) =>
    Effect.fail(
      new RepositoryError({
        operation,
        conversationId,
        detail: `the stored settings do not decode: ${cause.message}`,
        cause
      })
    )
})
