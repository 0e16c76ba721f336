/**
 * The summarization lock of the SQL repository: an in-process try-lock, and, for databases that
 * several processes share, a PostgreSQL advisory try-lock held for the duration of the effect.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Effect, Exit, HashSet, Option, Ref, Schema, Scope } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { RepositoryError } from "../../../../errors/RepositoryError.js"
import { LockedRow } from "./rows.js"

/** Separates our advisory locks from the host's (two-int keys: namespace, conversation). */
const namespace = "effect-chat-memory/summarization"

/**
 * The lock, as `RepositoryService.withSummarizationLock`.
 *
 * Why this shape. The effect run under the lock reads and writes through the repository and
 * waits for a model for seconds, so:
 * - Holders in this process are excluded by a `HashSet` in a `Ref`, as in the in-memory
 *   repository, without touching the database.
 * - Other processes are excluded by `pg_try_advisory_xact_lock` in a transaction of its own, on a
 *   connection reserved for the duration and rolled back at the end, which releases the lock.
 *   The effect's own statements run on other pooled connections: running them inside the lock's
 *   transaction would keep the conversation row locked (blocking appends) until the model
 *   answered, and roll a committed summary back if the effect failed afterwards. A
 *   transaction-scoped lock, unlike a session lock, cannot outlive its holder on a pooled
 *   connection: the transaction ends by rollback, or with the session if the connection dies.
 *   The transaction writes nothing and holds no snapshot between statements.
 * - Each holder keeps one connection, so at most `maxConnections` hold advisory locks at once;
 *   beyond that the lock answers `None` (busy, try later) rather than wait, so the pool always
 *   keeps connections for the work done under the locks and holders never deadlock on it.
 * - A store owned by one process (PGlite) uses the in-process lock alone: its single connection
 *   could not be reserved while the effect runs statements.
 * Hash collisions of conversation ids only make two conversations skip each other's turn; the
 * summary state's compare-and-set keeps every outcome correct regardless.
 */
export const makeSummarizationLock = (
  sql: SqlClient.SqlClient,
  options: { readonly advisory: boolean; readonly maxConnections: number }
) =>
  Effect.gen(function*() {
    const held = yield* Ref.make(HashSet.empty<ConversationId>())
    const connections = yield* Effect.makeSemaphore(Math.max(1, options.maxConnections))

    const storeError = (conversationId: ConversationId) => (cause: unknown) =>
      new RepositoryError({ operation: "withSummarizationLock", conversationId, cause })

    // Ending the lock's transaction releases the lock; when that fails the connection is broken,
    // and the server ends the session (and the lock) with it.
    const rollback = (connection: Connection, conversationId: ConversationId) =>
      connection.executeUnprepared("ROLLBACK", [], undefined).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning("could not end the summarization lock's transaction", error).pipe(
            Effect.annotateLogs("conversationId", conversationId)
          )
        )
      )

    const acquireAdvisory = (conversationId: ConversationId) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        return yield* Effect.gen(function*() {
          const connection = yield* Scope.extend(sql.reserve, scope)
          const tryLock = SqlSchema.findAll({
            Request: Schema.String,
            Result: LockedRow,
            execute: (id) =>
              connection.execute(
                "SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS locked",
                [namespace, id],
                undefined
              )
          })
          yield* connection.executeUnprepared("BEGIN", [], undefined)
          const rows = yield* tryLock(conversationId).pipe(
            Effect.onError(() => rollback(connection, conversationId))
          )
          return { scope, connection, locked: rows[0]?.locked === true }
        }).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
      }).pipe(Effect.mapError(storeError(conversationId)))

    const advisory = <A, E, R>(
      conversationId: ConversationId,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Option.Option<A>, E | RepositoryError, R> =>
      Effect.acquireUseRelease(
        acquireAdvisory(conversationId),
        ({ locked }) => (locked ? Effect.asSome(effect) : Effect.succeedNone),
        ({ connection, scope }, exit) => Effect.ensuring(rollback(connection, conversationId), Scope.close(scope, exit))
      ).pipe(connections.withPermitsIfAvailable(1), Effect.map(Option.flatten))

    return <A, E, R>(
      conversationId: ConversationId,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Option.Option<A>, E | RepositoryError, R> =>
      Effect.acquireUseRelease(
        Ref.modify(
          held,
          (ids) => HashSet.has(ids, conversationId) ? [false, ids] : [true, HashSet.add(ids, conversationId)]
        ),
        (acquired) =>
          !acquired
            ? Effect.succeedNone
            : options.advisory
            ? advisory(conversationId, effect)
            : Effect.asSome(effect),
        (acquired) => (acquired ? Ref.update(held, HashSet.remove(conversationId)) : Effect.void)
      ).pipe(Effect.withSpan("SqlRepository.withSummarizationLock", { attributes: { conversationId } }))
  })
