/**
 * Writes the template cluster `PgliteClient` loads into a new database instead of running `initdb`,
 * and its description beside it: `npx tsx scripts/pglite-template.ts`. Run it again when PGlite
 * moves to another PostgreSQL major (the template test fails then).
 *
 * The template is a bare cluster (no table of ours: the migrations run when a store opens, so it
 * never goes stale when one is added), made as small as it goes: only the `postgres` database
 * PGlite connects to, and no write-ahead log of what `initdb` did.
 */
import { PGlite } from "@electric-sql/pglite"
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const tarball = fileURLToPath(new URL("../src/layers/store/internal/pglite-template.tar.gz", import.meta.url))
const description = fileURLToPath(new URL("../src/layers/store/internal/pglite-template.json", import.meta.url))
const pgliteManifest = fileURLToPath(new URL("../node_modules/@electric-sql/pglite/package.json", import.meta.url))

const pgliteVersion = (): string => {
  const manifest: unknown = JSON.parse(readFileSync(pgliteManifest, "utf8"))
  return typeof manifest === "object" && manifest !== null && "version" in manifest &&
      typeof manifest.version === "string"
    ? manifest.version
    : "unknown"
}

// Without recycling, a checkpoint deletes the log segments it no longer needs instead of renaming
// them, old records and all, into future segments.
const db = await PGlite.create({ startParams: [...PGlite.defaultStartParams, "-c", "wal_recycle=off"] })
const [{ database, version } = { database: "", version: 0 }] = (await db.query<{ database: string; version: number }>(
  "SELECT current_database() AS database, current_setting('server_version_num')::int AS version"
)).rows
if (database !== "postgres") throw new Error(`PGlite connects to ${database}, not postgres`)
// Each template database is one more copy of the catalogs; nothing connects to them, and without
// them CREATE DATABASE needs an explicit TEMPLATE (a PGlite session has one database anyway).
for (const name of ["template0", "template1"]) {
  await db.exec(`ALTER DATABASE ${name} IS_TEMPLATE false`)
  await db.exec(`DROP DATABASE ${name}`)
}
// `initdb` copies the databases through the log; two switches and checkpoints leave only the
// segment of the last checkpoint, which holds little more than it.
for (let i = 0; i < 2; i++) {
  await db.query("SELECT pg_switch_wal()")
  await db.exec("CHECKPOINT")
}
const tar = new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer())
await db.close()
const gzipped = gzipSync(tar, { level: 9 })

// The template must open as a store would open it.
const check = await PGlite.create({ loadDataDir: new Blob([gzipped], { type: "application/gzip" }) })
const [{ databases } = { databases: "" }] = (await check.query<{ databases: string }>(
  "SELECT string_agg(datname, ',') AS databases FROM pg_database"
)).rows
await check.close()
if (databases !== "postgres") throw new Error(`the template holds the databases ${databases}`)

writeFileSync(tarball, gzipped)
const described = {
  postgresMajor: String(Math.floor(version / 10000)),
  pglite: pgliteVersion(),
  bytes: gzipped.length
}
writeFileSync(description, `${JSON.stringify(described, null, 2)}\n`)
console.log(
  `${tarball}: ${gzipped.length} bytes (${tar.length} unpacked), PostgreSQL ${described.postgresMajor}, PGlite ${described.pglite}`
)
