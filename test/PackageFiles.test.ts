/**
 * The command line's default inputs ship with the package: `effect-chat-memory replay` and `eval`
 * run without arguments from an installed copy only when the files they default to are packed.
 * The example agent (`examples/agent.ts`) ships too, for an app to start from. The command line
 * reports the package's version.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import { program } from "../src/cli/Commands.js"
import * as Eval from "../src/cli/Eval.js"
import * as Replay from "../src/cli/Replay.js"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("package files", () => {
  it("list the transcript and the questions the command line defaults to, and the example agent", () => {
    const manifest: unknown = JSON.parse(readFileSync(`${root}/package.json`, "utf8"))
    const files = typeof manifest === "object" && manifest !== null && "files" in manifest &&
        Array.isArray(manifest.files)
      ? manifest.files
      : []
    for (const path of [Replay.defaultTranscript, Eval.defaultQuestions, `${root}/examples/agent.ts`]) {
      assert.include(files, relative(root, path), path)
    }
  })

  it("the command line's version (--version, mcp's initialize) is the package's", () => {
    const manifest: unknown = JSON.parse(readFileSync(`${root}/package.json`, "utf8"))
    const version = typeof manifest === "object" && manifest !== null && "version" in manifest
      ? manifest.version
      : undefined
    assert.strictEqual(program.version, version)
  })
})
