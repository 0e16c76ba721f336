/**
 * The SQL store on its drivers: PostgreSQL, the production store that processes share, and PGlite,
 * embedded in memory or in a data directory.
 *
 * @since 0.1.0
 */
import { Config, type ConfigError, type Duration, Effect, Layer, type Redacted } from "effect"
import type { RepositoryError } from "../../errors/RepositoryError.js"
import { connectError } from "../internal/connectError.js"
import * as OptionalPeer from "../internal/optionalPeer.js"
import * as PgliteClient from "./PgliteClient.js"
import * as SqlStore from "./SqlStore.js"
import type * as Store from "./Store.js"

/**
 * The connection pool's default size.
 */
const defaultMaxConnections = 10

/**
 * A PostgreSQL store: the database URL and the pool.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly url: Redacted.Redacted
  /** Connections in the pool (default 10). */
  readonly maxConnections?: number | undefined
  /**
   * How many of this layer's summarizations may hold the cross-process lock at once. Beyond that the
   * lock answers busy. Unbounded by default: the lock is a lease in the database. A holder keeps a
   * connection only while it reads and commits, not while its model answers. The strategy bounds its
   * own background summarizations (`summarizationConcurrency`).
   */
  readonly maxLockConnections?: number | undefined
  /**
   * How long a summarization lease lasts unless renewed (default 30 seconds). A process that dies
   * while summarizing blocks that conversation's summaries for this long.
   */
  readonly lease?: Duration.DurationInput | undefined
  /** @deprecated Use `lease`. */
  readonly leaseMillis?: number | undefined
  /** Reported to the server as `application_name`. */
  readonly applicationName?: string | undefined
}

/**
 * The SQL store over a PostgreSQL pool (`@effect/sql-pg`), providing every storage port. Its
 * summarization leases live in the database and hold across processes. The migrations run when the
 * layer is built.
 *
 * @example
 * ```ts
 * import { Config, Redacted } from "effect"
 * import { PgStore } from "effect-chat-memory"
 *
 * // The PostgreSQL store; its migrations run when the layer is built.
 * export const Store = PgStore.layer({ url: Redacted.make("postgres://app:secret@localhost:5432/app") })
 * // The same, with the URL read from the app's variable.
 * export const FromConfig = PgStore.layerConfig({ url: Config.redacted("DATABASE_URL") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Store.Ports, RepositoryError> => {
  const maxConnections = options.maxConnections ?? defaultMaxConnections
  return SqlStore.layer({
    lock: "lease",
    maxLockConnections: options.maxLockConnections,
    lease: options.lease,
    leaseMillis: options.leaseMillis
  }).pipe(
    Layer.provide(
      Layer.unwrapEffect(
        // `@effect/sql-pg` is an optional peer, loaded when this layer is built.
        OptionalPeer.load("@effect/sql-pg", () => import("@effect/sql-pg")).pipe(
          Effect.mapError(connectError),
          Effect.map(({ PgClient }) =>
            PgClient.layer({
              url: options.url,
              maxConnections,
              applicationName: options.applicationName ?? "effect-chat-memory"
            }).pipe(Layer.mapError(connectError))
          )
        )
      )
    )
  )
}

/**
 * `layer` with its options from `config`, as in `PgClient.layerConfig`: a `Config` of the options,
 * or a `Config` per option. The caller names the variables. `ChatMemoryConfig.postgres` reads
 * `DATABASE_URL`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<Store.Ports, RepositoryError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))

/**
 * The SQL store over PGlite, providing every storage port, in memory or in `dataDir` (created if
 * missing). It closes with the layer. A PGlite database has one owner, one layer of one process at
 * a time, so the summarization lease is the in-process one.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPglite = (
  options: PgliteClient.Options = {}
): Layer.Layer<Store.Ports, RepositoryError> =>
  SqlStore.layer({ lock: "process" }).pipe(
    Layer.provide(PgliteClient.layer(options).pipe(Layer.mapError(connectError)))
  )
