/**
 * Template clusters for PGlite, in place of `initdb`. A data directory tarball is checked, then
 * written into a new directory or handed to PGlite for a database in memory. It is undone if the
 * cluster does not start.
 */
import { Data, Effect, Option } from "effect"
import { access, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { gunzip } from "node:zlib"

/** The template that ships with the package (written by `scripts/pglite-template.ts`). */
export const bundledUrl = new URL("./pglite-template.tar.gz", import.meta.url)

/** A template that cannot be used: unreadable, not a tarball of a cluster, or not writable. */
export class TemplateError extends Data.TaggedError("TemplateError")<{
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `PGlite template: ${this.reason}`
  }
}

/** A cluster to try to start from the template, and how to remove what it wrote if it fails. */
export interface Attempt {
  /** PGlite's `loadDataDir` for a database in memory; undefined once the template is on disk. */
  readonly loadDataDir: Blob | undefined
  /** The PostgreSQL major the template was made with (its `PG_VERSION`). */
  readonly postgresMajor: string
  readonly undo: Effect.Effect<void>
}

interface Entry {
  readonly path: ReadonlyArray<string>
  readonly directory: boolean
  readonly data: Uint8Array
}

const gunzipAsync = promisify(gunzip)

const block = 512

const text = (bytes: Uint8Array, start: number, length: number): string => {
  const field = bytes.subarray(start, start + length)
  const end = field.indexOf(0)
  return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end))
}

/**
 * The entries of a tar archive of plain files and directories, or undefined unless every header is
 * well formed. That means magic, checksum, sizes within the archive, an end marker, and no path
 * out of the archive. PGlite unpacks without such checks, and some malformed archives make it
 * reject where nobody can catch it. So it gets only archives that pass.
 */
const entriesOf = (tar: Uint8Array): ReadonlyArray<Entry> | undefined => {
  const entries: Array<Entry> = []
  let offset = 0
  while (offset + block <= tar.length) {
    const header = tar.subarray(offset, offset + block)
    if (header.every((byte) => byte === 0)) return entries
    if (text(header, 257, 5) !== "ustar") return undefined
    let sum = 0
    // The checksum counts its own field as spaces.
    for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 32 : header[i] ?? 0
    const size = Number.parseInt(text(header, 124, 12).trim() || "0", 8)
    if (Number.parseInt(text(header, 148, 8).trim(), 8) !== sum || !Number.isFinite(size)) return undefined
    const type = text(header, 156, 1)
    const path = text(header, 0, 100).split("/").filter((part) => part !== "" && part !== ".")
    if (!["", "0", "5"].includes(type) || path.includes("..")) return undefined
    offset += block
    if (offset + size > tar.length) return undefined
    if (path.length > 0) entries.push({ path, directory: type === "5", data: tar.subarray(offset, offset + size) })
    offset += Math.ceil(size / block) * block
  }
  return undefined
}

const isPostgresVersion = (entry: Entry) => !entry.directory && entry.path.join("/") === "PG_VERSION"

const fileExists = (path: string): Effect.Effect<boolean> =>
  Effect.promise(() => access(path).then(() => true, () => false))

/** A template's plain tarball (gunzipped if need be), its entries and its PostgreSQL major. */
const unpack = (template: "bundled" | Blob) =>
  Effect.gen(function*() {
    const bytes = yield* Effect.tryPromise({
      try: async () =>
        template === "bundled"
          ? new Uint8Array(await readFile(fileURLToPath(bundledUrl)))
          : new Uint8Array(await template.arrayBuffer()),
      catch: (cause) => new TemplateError({ reason: "cannot be read", cause })
    })
    const tar = bytes[0] === 0x1f && bytes[1] === 0x8b
      ? yield* Effect.tryPromise({
        try: async () => new Uint8Array(await gunzipAsync(bytes)),
        catch: (cause) => new TemplateError({ reason: "is not a valid gzip file", cause })
      })
      : bytes
    const entries = entriesOf(tar)
    const version = entries?.find(isPostgresVersion)
    if (entries === undefined || version === undefined) {
      return yield* new TemplateError({ reason: "is not a tar archive of a PostgreSQL data directory" })
    }
    return { tar, entries, postgresMajor: new TextDecoder().decode(version.data).trim() }
  })

/**
 * How to remove what is written to `dataDir` from now on. That is the directory if it does not
 * exist yet, otherwise only the entries added to it.
 */
const undoIn = (dataDir: string): Effect.Effect<Effect.Effect<void>> =>
  Effect.gen(function*() {
    const existed = yield* fileExists(dataDir)
    const before = new Set(existed ? yield* Effect.promise(() => readdir(dataDir).catch(() => [])) : [])
    const remove = (path: string) =>
      Effect.tryPromise({
        try: () => rm(path, { recursive: true, force: true }),
        catch: (cause) => new TemplateError({ reason: `wrote ${path}, which cannot be removed`, cause })
      }).pipe(Effect.catchAll((error) => Effect.logWarning(error.message, error)))
    return existed
      ? Effect.flatMap(
        Effect.promise(() => readdir(dataDir).catch(() => [])),
        (after) => Effect.forEach(after.filter((name) => !before.has(name)), (name) => remove(join(dataDir, name)))
      ).pipe(Effect.asVoid)
      : remove(dataDir)
  })

/**
 * Writes the entries into `dataDir` with PostgreSQL's modes: only the owner reads a data directory.
 * `PG_VERSION` goes last. A directory without it holds no cluster, so a write cut short is redone
 * at the next open, not started as a cluster.
 */
const writeInto = (dataDir: string, entries: ReadonlyArray<Entry>): Effect.Effect<void, TemplateError> =>
  Effect.tryPromise({
    try: async () => {
      const directories = new Set<string>()
      for (const entry of entries) {
        directories.add(join(dataDir, ...(entry.directory ? entry.path : entry.path.slice(0, -1))))
      }
      // Not recursive, so a missing parent fails as it does in PGlite.
      await access(dataDir).catch(() => mkdir(dataDir, { mode: 0o700 }))
      for (const directory of directories) await mkdir(directory, { recursive: true, mode: 0o700 })
      const files = entries.filter((entry) => !entry.directory && !isPostgresVersion(entry))
      for (let i = 0; i < files.length; i += 16) {
        // Settled before failing, so no write lands after the undo.
        const written = await Promise.allSettled(
          files.slice(i, i + 16).map((file) => writeFile(join(dataDir, ...file.path), file.data, { mode: 0o600 }))
        )
        const failed = written.find((result) => result.status === "rejected")
        if (failed !== undefined) throw failed.reason
      }
      for (const version of entries.filter(isPostgresVersion)) {
        await writeFile(join(dataDir, ...version.path), version.data, { mode: 0o600 })
      }
    },
    catch: (cause) => new TemplateError({ reason: `cannot be written to ${dataDir}`, cause })
  })

/**
 * The cluster to try to start from `template`. A `dataDir` on disk is written now. Without one, the
 * database is in memory, through PGlite's `loadDataDir`. None when the directory already holds a
 * cluster, or when the template cannot be used. An unusable template is logged and what it wrote
 * removed, and PGlite then runs `initdb`.
 */
export const prepare = (
  template: "bundled" | Blob,
  dataDir: string | undefined
): Effect.Effect<Option.Option<Attempt>> =>
  Effect.gen(function*() {
    if (dataDir !== undefined && (yield* fileExists(join(dataDir, "PG_VERSION")))) return Option.none()
    const undo = dataDir === undefined ? Effect.void : yield* undoIn(dataDir)
    const attempt = Effect.gen(function*() {
      const { entries, postgresMajor, tar } = yield* unpack(template)
      if (dataDir === undefined) {
        return { loadDataDir: new Blob([tar], { type: "application/x-tar" }), postgresMajor, undo }
      }
      yield* Effect.onError(writeInto(dataDir, entries), () => undo)
      return { loadDataDir: undefined, postgresMajor, undo }
    })
    return yield* attempt.pipe(
      Effect.map(Option.some),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("PGlite: the template cannot be used; running initdb", error), Option.none())
      )
    )
  })
