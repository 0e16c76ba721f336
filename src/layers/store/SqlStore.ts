/**
 * The SQL store: every storage port over `@effect/sql`'s generic `SqlClient`, in the PostgreSQL 15
 * dialect. It runs on PostgreSQL through `@effect/sql-pg`, or on embedded PGlite.
 *
 * @since 0.1.0
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Duration, Effect, type Layer, Option } from "effect"
import { RepositoryError } from "../../errors/RepositoryError.js"
import * as Conversations from "./internal/sql/conversations.js"
import * as Lease from "./internal/sql/lease.js"
import * as MessageIndex from "./internal/sql/messageIndex.js"
import { runMigrations } from "./internal/sql/migrations.js"
import * as Settings from "./internal/sql/settings.js"
import { makeStatements } from "./internal/sql/statements.js"
import * as Summaries from "./internal/sql/summaries.js"
import * as Users from "./internal/sql/users.js"
import * as Store from "./Store.js"

/**
 * The SQL store's options.
 *
 * `lock` says how the summarization lease (`SummarizationLease.withLease`) keeps other holders out.
 * `"lease"`, the default, is for databases several processes share. It takes a lease on the
 * conversation in the database and holds no connection while the effect runs. `"process"` excludes
 * holders in this process only, for stores one process owns (PGlite).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly lock?: "lease" | "process" | undefined
  /**
   * With `"lease"`: how many summarizations may hold the lock at once. Beyond that the lock answers
   * `None` (busy). Unbounded by default: a holder keeps no connection while it waits for a model.
   * The strategies bound their own background concurrency (`summarizationConcurrency`).
   */
  readonly maxLockConnections?: number | undefined
  /**
   * With `"lease"`: how long a lease lasts unless renewed (default 30 seconds). It is renewed while
   * its holder runs. So this only bounds how long a dead holder blocks its conversation's summaries.
   */
  readonly lease?: Duration.DurationInput | undefined
  /** @deprecated Use `lease`. */
  readonly leaseMillis?: number | undefined
}

/** How long a lease lasts unless renewed. */
const defaultLease: Duration.Duration = Duration.seconds(30)

/**
 * Builds the store over the `SqlClient` in context, its ports sharing the same tables. The schema
 * must be in place (`migrate`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Store.Store, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = makeStatements(sql)
    return {
      repository: Conversations.make(sql, statements),
      summaries: Summaries.make(sql, statements),
      settings: Settings.make(sql, statements),
      index: MessageIndex.make(sql),
      lease: yield* Lease.make(sql, {
        shared: (options.lock ?? "lease") !== "process",
        maxHolders: options.maxLockConnections,
        leaseMillis: Duration.toMillis(Duration.decode(options.lease ?? options.leaseMillis ?? defaultLease))
      }),
      users: Users.make(sql)
    }
  })

/**
 * Creates or upgrades the store's tables, recording migrations in `chat_memory_migrations`. Safe to
 * run from several processes at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const migrate: Effect.Effect<void, RepositoryError, SqlClient.SqlClient> = runMigrations.pipe(
  // Two processes starting together may race to create the migrations table. The loser's retry
  // finds it, waits on its lock, then has nothing to do.
  Effect.retry({ times: 2, while: (error) => error._tag === "SqlError" }),
  Effect.asVoid,
  // `Migrator` makes a failed migration a defect. Here it is a store failure.
  Effect.catchSomeDefect((defect) =>
    defect instanceof Migrator.MigrationError
      ? Option.some(Effect.fail(new RepositoryError({ operation: "migrate", cause: defect })))
      : Option.none()
  ),
  Effect.catchTags({
    SqlError: (cause) => Effect.fail(new RepositoryError({ operation: "migrate", cause })),
    MigrationError: (cause) => Effect.fail(new RepositoryError({ operation: "migrate", cause }))
  }),
  Effect.withSpan("SqlStore.migrate")
)

/**
 * The SQL store over the `SqlClient` in context, providing every storage port. It runs the
 * migrations first.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Config, Layer } from "effect"
 * import { SqlStore } from "effect-chat-memory"
 *
 * // The store over the app's own PostgreSQL pool: the memory's tables beside the app's.
 * export const Store = SqlStore.layer().pipe(
 *   Layer.provide(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Store.Ports, RepositoryError, SqlClient.SqlClient> =>
  Store.layer(Effect.zipRight(migrate, make(options)))
