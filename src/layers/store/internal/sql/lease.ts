/**
 * The SQL store's summarization lease (`SummarizationLease`): an in-process try-lock. For databases
 * several processes share, it adds a lease in the database that holds no connection.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, HashSet, Option, Ref, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { RepositoryError } from "../../../../errors/RepositoryError.js"
import { SummarizationLease } from "../../../../services/SummarizationLease.js"
import { FoundRow } from "./rows.js"

/**
 * How the lock keeps holders apart.
 *
 * @internal
 */
export interface LockOptions {
  /** Whether other processes share the database. If so, a lease is taken there as well. */
  readonly shared: boolean
  /** How many holders this store admits at once, or any number if unset. Beyond it, `None`. */
  readonly maxHolders: number | undefined
  /** How long a lease lasts unless renewed, which is how long a dead holder keeps the others out. */
  readonly leaseMillis: number
}

const LeaseRequest = Schema.Struct({ id: Schema.String, owner: Schema.String, seconds: Schema.Number })

/**
 * The lease, as the store's `SummarizationLease`.
 *
 * The effect run under the lock reads and writes through the store and waits seconds for a model.
 * So nothing may stay held on the database while it runs:
 * - A `HashSet` in a `Ref` excludes holders in this process, as in the in-memory store, without
 *   touching the database.
 * - A lease excludes other processes. It is a row of `chat_memory_leases`, taken by one conditional
 *   upsert that applies only when no lease is in force. It is deleted when the effect ends,
 *   whatever the outcome. No connection, transaction or row lock is held in between. So a holder
 *   waiting for its model costs the pool nothing, and appends never wait for it. Times come from
 *   the server's clock, so processes need not agree on theirs.
 * - A lease lasts `leaseMillis` and is renewed every third of that while the effect runs. A slow
 *   model thus never lets it lapse. A holder that dies (process killed, network gone) keeps the
 *   others out for at most `leaseMillis`. If renewal fails for a whole lease (database
 *   unreachable) or finds the lease taken, the effect is interrupted and the lock fails. It no
 *   longer excludes anyone.
 * - `maxHolders`, if given, bounds one store's holders. Beyond it the lock answers `None` (busy,
 *   try later). There is no bound by default, since a holder keeps nothing while it waits. The
 *   background jobs bound their own concurrency, and wait for a turn instead of giving up.
 * - A store one process owns (PGlite) uses only the in-process lock.
 *
 * Correctness never rests on the lease alone. The summary state's compare-and-set refuses a commit
 * made from a state that moved, e.g. after a database crash emptied the unlogged table.
 */
export const make = (
  sql: SqlClient.SqlClient,
  options: LockOptions
): Effect.Effect<SummarizationLease.Service> =>
  Effect.gen(function*() {
    const held = yield* Ref.make(HashSet.empty<ConversationId>())
    const holders = options.maxHolders === undefined
      ? undefined
      : yield* Effect.makeSemaphore(Math.max(1, Math.floor(options.maxHolders)))
    const admitted = <A, E, R>(effect: Effect.Effect<Option.Option<A>, E, R>) =>
      holders === undefined ? effect : Effect.map(holders.withPermitsIfAvailable(1)(effect), Option.flatten)
    // Tells this store's leases from other processes'. A holder renews and releases only its own.
    const instance = yield* Effect.sync(() => crypto.randomUUID())
    const taken = yield* Ref.make(0)
    // Renewals run every third of a lease, so a shorter lease would have them run back to back.
    const leaseMillis = Math.max(100, options.leaseMillis)
    const seconds = leaseMillis / 1000

    const storeError = (conversationId: ConversationId) => (cause: unknown) =>
      new RepositoryError({ operation: "withLease", conversationId, cause })

    const take = SqlSchema.findOne({
      Request: LeaseRequest,
      Result: FoundRow,
      execute: (r) =>
        sql`INSERT INTO chat_memory_leases AS l (conversation_id, lease_owner, lease_until)
          VALUES (${r.id}, ${r.owner}, clock_timestamp() + make_interval(secs => ${r.seconds}))
          ON CONFLICT (conversation_id) DO UPDATE
            SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
            WHERE l.lease_until < clock_timestamp()
          RETURNING 1 AS found`
    })
    const renew = SqlSchema.findOne({
      Request: LeaseRequest,
      Result: FoundRow,
      execute: (r) =>
        sql`UPDATE chat_memory_leases SET lease_until = clock_timestamp() + make_interval(secs => ${r.seconds})
          WHERE conversation_id = ${r.id} AND lease_owner = ${r.owner}
          RETURNING 1 AS found`
    })
    const release = (conversationId: ConversationId, owner: string) =>
      sql`DELETE FROM chat_memory_leases WHERE conversation_id = ${conversationId} AND lease_owner = ${owner}`.pipe(
        Effect.asVoid,
        // The lease then lapses by itself, within `leaseMillis`.
        Effect.catchAll((error) =>
          Effect.logWarning("could not release the summarization lease; it will expire", error).pipe(
            Effect.annotateLogs("conversationId", conversationId)
          )
        )
      )

    /** Takes the lease if no other is in force, returning its owner token. */
    const acquire = (conversationId: ConversationId) =>
      Effect.gen(function*() {
        const owner = `${instance}/${yield* Ref.getAndUpdate(taken, (n) => n + 1)}`
        const row = yield* take({ id: conversationId, owner, seconds })
        return Option.as(row, owner)
      }).pipe(Effect.mapError(storeError(conversationId)))

    /**
     * Renews the lease until interrupted. It fails once the lease is lost: taken by another, or not
     * confirmed for a whole lease, counted from when the last confirming statement was sent.
     */
    const keepAlive = (conversationId: ConversationId, owner: string) =>
      Effect.gen(function*() {
        let confirmed = yield* Clock.currentTimeMillis
        while (true) {
          yield* Effect.sleep(Duration.millis(leaseMillis / 3))
          const sent = yield* Clock.currentTimeMillis
          const renewed = yield* Effect.either(renew({ id: conversationId, owner, seconds }))
          if (renewed._tag === "Right") {
            if (Option.isNone(renewed.right)) return yield* storeError(conversationId)("the lease was taken over")
            confirmed = sent
          } else {
            yield* Effect.logWarning("could not renew the summarization lease", renewed.left).pipe(
              Effect.annotateLogs("conversationId", conversationId)
            )
            if ((yield* Clock.currentTimeMillis) - confirmed >= leaseMillis) {
              return yield* storeError(conversationId)(renewed.left)
            }
          }
        }
      })

    const leased = <A, E, R>(
      conversationId: ConversationId,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Option.Option<A>, E | RepositoryError, R> =>
      Effect.acquireUseRelease(
        acquire(conversationId),
        Option.match({
          onNone: () => Effect.succeedNone,
          // Whichever ends first stops the other: the effect stops renewals, a lost lease the effect.
          onSome: (owner) => Effect.asSome(Effect.raceFirst(effect, keepAlive(conversationId, owner)))
        }),
        Option.match({ onNone: () => Effect.void, onSome: (owner) => release(conversationId, owner) })
      ).pipe(admitted)

    const withLease = <A, E, R>(
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
            : options.shared
            ? leased(conversationId, effect)
            : Effect.asSome(effect),
        (acquired) => (acquired ? Ref.update(held, HashSet.remove(conversationId)) : Effect.void)
      ).pipe(Effect.withSpan("SqlStore.withLease", { attributes: { conversationId } }))

    return SummarizationLease.of({ withLease })
  })
