/**
 * An `SqlClient` over PGlite, PostgreSQL compiled to WASM and run in-process. It is the embedded
 * store, with the server's SQL dialect.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Ref, type Scope, Stream } from "effect"
import * as OptionalPeer from "../internal/optionalPeer.js"
import * as Template from "./internal/pgliteTemplate.js"

/**
 * Where PGlite keeps its data (a directory on disk, or memory without `dataDir`), and what a new
 * database starts from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly dataDir?: string | undefined
  /**
   * The cluster a new database loads from, sparing PostgreSQL's `initdb` (seconds, and near a
   * gigabyte of memory at peak). `"bundled"` is the bare cluster shipped with the package, the
   * default with a `dataDir` on disk. A `Blob` is a data directory tarball from PGlite's
   * `dumpDataDir`, gzipped or not. `"initdb"` is the default in memory. A data directory that
   * already holds a cluster ignores it. A template that cannot be read or started (say, from another
   * PostgreSQL major) logs a warning. What its load wrote is then removed, and `initdb` makes the
   * cluster. The bundled template holds only the `postgres` database, so `CREATE DATABASE` there
   * needs an explicit `TEMPLATE`.
   */
  readonly template?: "bundled" | "initdb" | Blob | undefined
}

type Row = Record<string, unknown>

/** PostgreSQL's buffer cache in PGlite (see `make`). */
const sharedBuffers = "16MB"

/** How many statements PGlite runs before the event loop gets a turn (see `make`). */
const statementsPerTurn = 8

/** Resumes after the event loop's pending timers and I/O callbacks (`setImmediate`). */
const eventLoopTurn: Effect.Effect<void> = Effect.async((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** The directory on disk `dataDir` names, as PGlite reads it; undefined for other file systems. */
const directoryOf = (dataDir: string): string | undefined =>
  dataDir.startsWith("file://")
    ? dataDir.slice("file://".length)
    : /^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)
    ? undefined
    : dataDir

/**
 * Opens PGlite and builds an `SqlClient` over it. Closing the scope closes the database. PGlite
 * (`@electric-sql/pglite`) and `@effect/sql-pg` (for its statement compiler) are optional peers,
 * loaded here. A missing one fails with an `SqlError` whose message is its install line.
 *
 * PGlite is one backend with one session, so the adapter is a pool of exactly one connection. A
 * one-permit semaphore is taken per statement outside transactions, and for a whole transaction.
 * So other fibers' statements never run inside someone else's transaction. Nested
 * `withTransaction` calls run as savepoints on the transaction's connection, without the permit.
 * Callers must therefore not wait, while holding a connection (a transaction, or `reserve`), for
 * work that needs another connection.
 */
const make = (
  options: Options = {}
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const [{ PGlite }, { PgClient }] = yield* OptionalPeer.loadBoth(
      ["@electric-sql/pglite", () => import("@electric-sql/pglite")],
      ["@effect/sql-pg", () => import("@effect/sql-pg")]
    ).pipe(Effect.mapError((missing) => new SqlError({ cause: missing, message: missing.message })))
    const open = (loadDataDir: Blob | undefined) =>
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
            ...(loadDataDir === undefined ? {} : { loadDataDir }),
            // PostgreSQL's 128 MB buffer cache is sized for a server. This store's pages already
            // live in memory or the OS's page cache. The cache is most of an open's resident memory.
            startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`]
          }),
        catch: (cause) => new SqlError({ cause, message: `PGlite: failed to open: ${describe(cause)}` })
      })
    const directory = options.dataDir === undefined ? undefined : directoryOf(options.dataDir)
    const template = options.template ?? (directory === undefined ? "initdb" : "bundled")
    const attempt = template === "initdb" ? Option.none() : yield* Template.prepare(template, directory)
    const db = yield* Effect.acquireRelease(
      Option.match(attempt, {
        onNone: () => open(undefined),
        onSome: ({ loadDataDir, postgresMajor, undo }) =>
          open(loadDataDir).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning(
                `PGlite: the template (PostgreSQL ${postgresMajor}) did not start; running initdb`,
                error
              ).pipe(Effect.zipRight(undo), Effect.zipRight(open(undefined)))
            )
          )
      }),
      (db) => Effect.promise(() => db.close())
    )
    const permit = yield* Effect.makeSemaphore(1)
    const statements = yield* Ref.make(0)

    // PGlite runs a statement synchronously in WASM and settles its promise at once. A fiber running
    // statements back to back (a replay, a migration) would never let the event loop turn. Timers,
    // I/O and the process's other requests would wait for the whole run. So every few statements,
    // the client yields to the event loop.
    const breathe = Effect.flatMap(
      Ref.modify(statements, (n) => [n % statementsPerTurn === statementsPerTurn - 1, n + 1] as const),
      (due) => (due ? eventLoopTurn : Effect.void)
    )

    const run = <A>(f: () => Promise<A>): Effect.Effect<A, SqlError> =>
      Effect.tryPromise({
        try: f,
        catch: (cause) => new SqlError({ cause, message: `PGlite: ${describe(cause)}` })
      }).pipe(Effect.zipLeft(breathe))

    const rowsOf = (
      sql: string,
      params: ReadonlyArray<unknown>,
      transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
    ): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
      Effect.map(
        run(() => db.query<Row>(sql, [...params])),
        (result) => (transformRows === undefined ? result.rows : transformRows(result.rows))
      )

    const connection: Connection = {
      execute: rowsOf,
      executeRaw: (sql, params) => run(() => db.query<Row>(sql, [...params])),
      executeValues: (sql, params) =>
        Effect.map(
          run(() => db.query<Array<unknown>>(sql, [...params], { rowMode: "array" })),
          (result) => result.rows
        ),
      executeUnprepared: (sql, params, transformRows) =>
        params.length > 0
          ? rowsOf(sql, params, transformRows)
          // The simple protocol lets parameterless scripts hold several statements.
          : Effect.map(run(() => db.exec(sql)), (results) => {
            const rows: ReadonlyArray<Row> = results.at(-1)?.rows ?? []
            return transformRows === undefined ? rows : transformRows(rows)
          }),
      // PGlite returns whole results, so a stream is one chunk.
      executeStream: (sql, params, transformRows) =>
        Stream.flatMap(Stream.fromEffect(rowsOf(sql, params, transformRows)), (rows) => Stream.fromIterable(rows))
    }

    // Waiting for the permit stays interruptible (a timeout behind a long transaction fires); once
    // taken, it is released with the scope.
    const acquirer = Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(restore(permit.take(1)), Effect.as(Effect.addFinalizer(() => permit.release(1)), connection))
    )
    return yield* SqlClient.make({
      acquirer,
      transactionAcquirer: acquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", options.dataDir ?? "memory"]]
    })
  })

/**
 * `SqlClient.SqlClient` over a PGlite database, in memory or in `dataDir`. It closes with the layer.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { PgliteClient, SqlStore } from "effect-chat-memory"
 *
 * // PostgreSQL in the process (WASM), on a data directory: the server's SQL, with no server.
 * export const Store = SqlStore.layer().pipe(Layer.provide(PgliteClient.layer({ dataDir: ".data/memory" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
