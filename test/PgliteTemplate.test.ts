/**
 * The template cluster PGlite starts from instead of running `initdb`: the bundled one opens with
 * the installed PGlite, a data directory made from it reopens with everything written, and a
 * template that cannot be used falls back to `initdb`, removing only what it wrote.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gunzipSync, gzipSync } from "node:zlib"
import * as Template from "../src/layers/store/internal/pgliteTemplate.js"
import * as PgliteClient from "../src/layers/store/PgliteClient.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import { freshId, newMessage } from "./fixtures/messages.js"

const description: unknown = JSON.parse(
  readFileSync(new URL("../src/layers/store/internal/pglite-template.json", import.meta.url), "utf8")
)
const bundledMajor = typeof description === "object" && description !== null && "postgresMajor" in description &&
    typeof description.postgresMajor === "string"
  ? description.postgresMajor
  : "missing"
const bundledTar = gunzipSync(readFileSync(fileURLToPath(Template.bundledUrl)))

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "chat-memory-template-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** The repository over a PGlite client, both provided. */
const store = (options: PgliteClient.Options) =>
  SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(PgliteClient.layer(options)))

/** The databases of the cluster: `initdb` makes `template0` and `template1` too, the template has none. */
const databases = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ readonly name: string }>`SELECT datname AS name FROM pg_database ORDER BY datname`
).pipe(Effect.map((rows) => rows.map((row) => row.name)))

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).replace(/\0.*$/s, "")

/** Calls `f` with the offset of the header of `tar`'s `PG_VERSION` in `copy`, a copy of `tar`. */
const patchPostgresVersion = (tar: Uint8Array, f: (copy: Uint8Array, header: number) => void): Uint8Array => {
  const copy = tar.slice()
  for (let offset = 0; offset + 512 <= copy.length;) {
    const name = text(copy.subarray(offset, offset + 100)).replace(/^\.?\//, "")
    const size = Number.parseInt(text(copy.subarray(offset + 124, offset + 136)).trim() || "0", 8)
    if (name === "PG_VERSION") {
      f(copy, offset)
      return copy
    }
    offset += 512 + Math.ceil(size / 512) * 512
  }
  throw new Error("no PG_VERSION in the template")
}

/** `tar` with its `PG_VERSION` saying `major` (two digits, as the bundled one). */
const withPostgresMajor = (tar: Uint8Array, major: string): Uint8Array =>
  patchPostgresVersion(tar, (copy, header) => copy.set(new TextEncoder().encode(major), header + 512))

/** `tar` with its `PG_VERSION` entry renamed (its header checksum written anew). */
const withoutPostgresVersion = (tar: Uint8Array): Uint8Array =>
  patchPostgresVersion(tar, (copy, header) => {
    const name = text(copy.subarray(header, header + 100))
    copy.set(new TextEncoder().encode(name.replace("PG_VERSION", "PG_VERSIOM")), header)
    copy.fill(32, header + 148, header + 156)
    const sum = copy.subarray(header, header + 512).reduce((total, byte) => total + byte, 0)
    copy.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, "0")}\0 `), header + 148)
  })

describe("the bundled template", () => {
  it.effect("is a bare cluster of the installed PGlite's PostgreSQL major", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [server] = yield* sql<{ readonly version: number }>`
        SELECT current_setting('server_version_num')::int AS version`
      const tables = yield* sql<{ readonly name: string }>`
        SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`
      assert.deepStrictEqual(
        {
          major: String(Math.floor((server?.version ?? 0) / 10000)),
          databases: yield* databases,
          tables: tables.length
        },
        { major: bundledMajor, databases: ["postgres"], tables: 0 }
      )
    }).pipe(Effect.provide(PgliteClient.layer({ template: "bundled" }))))

  it.scoped("makes a new data directory, which reopens with everything written", () =>
    Effect.gen(function*() {
      const dataDir = join(yield* tempDir, "db")
      const id = freshId("template")
      const read = Effect.gen(function*() {
        const repo = yield* RepositoryService
        return { databases: yield* databases, messages: yield* repo.listMessages(id, {}) }
      })
      const written = yield* Effect.gen(function*() {
        const repo = yield* RepositoryService
        yield* repo.appendMessages(id, [newMessage("user", "Ship ORD-1 to Lyon."), newMessage("assistant", "Done.")])
        return yield* read
      }).pipe(Effect.provide(store({ dataDir })))
      // Only the template lacks the template databases: no initdb ran.
      assert.deepStrictEqual(written.databases, ["postgres"])
      assert.deepStrictEqual(written.messages.map((m) => m.content), ["Ship ORD-1 to Lyon.", "Done."])
      assert.isTrue(existsSync(join(dataDir, "PG_VERSION")))
      // Reopened without a template: the cluster is the directory's own.
      assert.deepStrictEqual(yield* read.pipe(Effect.provide(store({ dataDir, template: "initdb" }))), written)
    }))
})

describe("a template that cannot be used", () => {
  it.scoped(
    "another PostgreSQL major: initdb makes the cluster, and what was in the directory stays",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDir
        writeFileSync(join(dataDir, "notes.txt"), "mine")
        const template = new Blob([gzipSync(withPostgresMajor(bundledTar, "10"))])
        const warnings: Array<string> = []
        const found = yield* databases.pipe(
          Effect.provide(PgliteClient.layer({ dataDir, template })),
          Effect.provide(Logger.replace(
            Logger.defaultLogger,
            Logger.make(({ logLevel, message }) => {
              if (logLevel._tag === "Warning") warnings.push(Array.isArray(message) ? `${message[0]}` : "")
            })
          ))
        )
        assert.deepStrictEqual(found, ["postgres", "template0", "template1"])
        assert.deepStrictEqual(warnings, ["PGlite: the template (PostgreSQL 10) did not start; running initdb"])
        assert.strictEqual(readFileSync(join(dataDir, "notes.txt"), "utf8"), "mine")
        assert.strictEqual(readFileSync(join(dataDir, "PG_VERSION"), "utf8").trim(), bundledMajor)
      })
  )

  it.scoped("a failed start is undone: a new directory is removed, an existing one keeps only what it held", () =>
    Effect.gen(function*() {
      const created = join(yield* tempDir, "db")
      const existing = yield* tempDir
      writeFileSync(join(existing, "notes.txt"), "mine")
      const attempts = yield* Effect.forEach([created, existing], (dataDir) => Template.prepare("bundled", dataDir))
      // The template is written into the directory before PGlite opens it.
      assert.deepStrictEqual(
        [created, existing].map((dataDir) => readFileSync(join(dataDir, "PG_VERSION"), "utf8").trim()),
        [bundledMajor, bundledMajor]
      )
      yield* Effect.forEach(attempts, (attempt) => Option.getOrThrow(attempt).undo)
      assert.isFalse(existsSync(created))
      assert.deepStrictEqual(readdirSync(existing), ["notes.txt"])
    }))

  it.effect("not a gzip file, not a tar archive, a truncated one, none with a PG_VERSION: not tried", () =>
    Effect.gen(function*() {
      const truncated = bundledTar.subarray(0, Math.floor(bundledTar.length / 2))
      const candidates = [
        new Uint8Array([0x1f, 0x8b, 1, 2, 3, 4]),
        new TextEncoder().encode("not a cluster"),
        truncated,
        gzipSync(truncated),
        withoutPostgresVersion(bundledTar)
      ]
      const tried = yield* Effect.forEach(candidates, (bytes) => Template.prepare(new Blob([bytes]), undefined))
      assert.deepStrictEqual(tried.map(Option.isSome), [false, false, false, false, false])
      // The bundled tarball itself, gzipped or not, is tried.
      const bundled = yield* Effect.forEach(
        [bundledTar, gzipSync(bundledTar)],
        (bytes) => Template.prepare(new Blob([bytes]), undefined)
      )
      assert.deepStrictEqual(bundled.map((attempt) => Option.map(attempt, (a) => a.postgresMajor)), [
        Option.some(bundledMajor),
        Option.some(bundledMajor)
      ])
    }))
})
