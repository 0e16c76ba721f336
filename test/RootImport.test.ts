/**
 * Importing the package's root, and a turn on the in-memory store, load neither PGlite nor
 * gpt-tokenizer (optional peers, loaded by the layers that use them); a turn on PGlite loads it.
 * The `ChatMemory` module alone (the memory's tag and layers) loads not even the OpenAI client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { root, tempDir } from "./fixtures/cli.js"

/** The node_modules packages a run of `importRoot.ts` resolved, and what it printed. */
const trace = (dir: string, store: "memory" | "pglite", entry: "root" | "module" = "root") =>
  Effect.async<{ readonly packages: ReadonlySet<string>; readonly stdout: string }>((resume) => {
    const out = join(dir, `${store}-${entry}.trace`)
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--import", "./test/fixtures/importTrace.mjs", "test/fixtures/importRoot.ts", store, entry],
      { cwd: root, env: { ...process.env, IMPORT_TRACE: out } }
    )
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.on("close", () => {
      const packages = new Set(
        readFileSync(out, "utf8").split("\n").flatMap((url) => {
          const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
          return match?.[1] === undefined ? [] : [match[1]]
        })
      )
      resume(Effect.succeed({ packages, stdout }))
    })
    return Effect.sync(() => child.kill())
  })

describe("the package's root", () => {
  it.scoped("loads neither PGlite nor gpt-tokenizer; a PGlite store loads PGlite", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const memory = yield* trace(dir, "memory")
      assert.strictEqual(memory.stdout.split("\n")[0], "1")
      assert.isTrue(memory.packages.has("effect"), [...memory.packages].join(", "))
      assert.isFalse(memory.packages.has("@electric-sql/pglite"), [...memory.packages].join(", "))
      assert.isFalse(memory.packages.has("gpt-tokenizer"), [...memory.packages].join(", "))
      // The trace sees what a layer loads: PGlite, once a PGlite store is built.
      const pglite = yield* trace(dir, "pglite")
      assert.strictEqual(pglite.stdout.split("\n")[0], "1")
      assert.isTrue(pglite.packages.has("@electric-sql/pglite"))
      assert.isFalse(pglite.packages.has("gpt-tokenizer"))
    }))
})

describe("the ChatMemory module", () => {
  it.scoped("loads neither PGlite, gpt-tokenizer nor the OpenAI client for a turn on the in-memory store", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const memory = yield* trace(dir, "memory", "module")
      assert.strictEqual(memory.stdout.split("\n")[0], "1")
      const loaded = [...memory.packages].join(", ")
      for (const peer of ["@electric-sql/pglite", "gpt-tokenizer", "@effect/ai-openai"]) {
        assert.isFalse(memory.packages.has(peer), `${peer}: ${loaded}`)
      }
    }))
})
