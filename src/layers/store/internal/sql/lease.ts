/**
 * The SQL store's summarization lease (`SummarizationLease`): an in-process try-lock and, for
 * databases that several processes share, a lease on the conversation in the database that holds
 * no connection.
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
  /** Whether other processes share the database (then a lease is taken there as well). */
  readonly shared: boolean
  /** How many holders this repository admits at once (any number without it); beyond, `None`. */
  readonly maxHolders: number | undefined
  /** How long a lease lasts unless renewed: how long a holder that died keeps the others out. */
  readonly leaseMillis: number
}

const LeaseRequest = Schema.Struct({ id: Schema.String, owner: Schema.String, seconds: Schema.Number })

/**
 * The lease, as the store's `SummarizationLease`.
 *
 * Why this shape. The effect run under the lock reads and writes through the repository and
 * waits for a model for seconds, so nothing may stay held on the database while it runs:
 * - Holders in this process are excluded by a `HashSet` in a `Ref`, as in the in-memory
 *   repository, without touching the database.
 * - Other processes are excluded by a lease: a row of `chat_memory_leases` taken by one
 *   conditional upsert (it applies only when no lease is in force) and deleted when the effect
 *   ends, whatever its outcome. Between the two statements no connection, transaction or row
 *   lock is held, so a holder waiting for its model costs the pool nothing, and appends never
 *   wait for it. Times are the server's clock, so processes need not agree on theirs.
 * - A lease lasts `leaseMillis` and is renewed every third of that while the effect runs, so a
 *   slow model never lets it lapse, and a holder that dies (process killed, network gone) keeps
 *   the others out for at most `leaseMillis`. Should renewal fail for a whole lease (the database
 *   unreachable), or find the lease taken, the effect is interrupted and the lock fails: it no
 *   longer excludes anyone.
 * - `maxHolders`, when given, bounds the holders of one repository; beyond it the lock answers
 *   `None` (busy, try later). By default there is no such bound: a holder keeps nothing while it
 *   waits, and the background jobs bound their own concurrency (and wait for a turn instead of
 *   giving up).
 * - A store owned by one process (PGlite) uses the in-process lock alone.
 * Correctness never rests on the lease alone: the summary state's compare-and-set refuses a
 * commit made from a state that moved, e.g. after a database crash emptied the (unlogged) table.
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
    // Tells this repository's leases from other processes': a holder renews and releases only its own.
    const instance = yield* Effect.sync(() => crypto.randomUUID())
    const taken = yield* Ref.make(0)
    // Renewals run every third of a lease: a lease shorter than this would have them run back to back.
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

    /** The lease, when no other is in force: its owner token. */
    const acquire = (conversationId: ConversationId) =>
      Effect.gen(function*() {
        const owner = `${instance}/${yield* Ref.getAndUpdate(taken, (n) => n + 1)}`
        const row = yield* take({ id: conversationId, owner, seconds })
        return Option.as(row, owner)
      }).pipe(Effect.mapError(storeError(conversationId)))

    /**
     * Renews the lease until interrupted; fails when it is lost: found taken by another, or not
     * confirmed for a whole lease (counted from before the last confirming statement was sent).
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
          // Whichever ends first: the effect (the renewals stop), or the lease (the effect stops).
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
