/**
 * The error mapping of the SQL store's ports, at their edge: what the driver and the row schemas
 * fail with becomes a `RepositoryError` naming the operation and the conversation.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult } from "effect"
import { RepositoryError } from "../../../../errors/RepositoryError.js"

/** The `catchTags` handlers of an operation on one conversation. */
export const storeErrors = (operation: string, conversationId: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, conversationId, cause })),
  ParseError: (cause: ParseResult.ParseError) => Effect.fail(new RepositoryError({ operation, conversationId, cause }))
})

/** As `storeErrors`; a settings row that does not decode is named in the detail. */
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
