/**
 * What the command line says about its input before it opens anything: a mistyped flag is named,
 * with the nearest flag the command knows, whichever way its value is given; a command that reads
 * a stored conversation on a directory without a store says so in one line and creates nothing;
 * and the bin without a package it imports names the package and its install command.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Launch from "../src/cli/Launch.js"
import { cli, type Run, tempDir } from "./fixtures/cli.js"

const commands = ["replay", "eval", "context", "messages", "inspect", "clear", "chat", "mcp"] as const

/** Arguments each command needs besides its flags. */
const required: Record<(typeof commands)[number], ReadonlyArray<string>> = {
  replay: [],
  eval: [],
  context: ["c"],
  messages: ["c"],
  inspect: ["c"],
  clear: ["c"],
  chat: [],
  mcp: ["--conversation", "c"]
}

/** A failure in one line on stderr and nothing on stdout, the line returned. */
const oneLine = (run: Run): string => {
  assert.strictEqual(run.code, 1)
  assert.strictEqual(run.stdout, "")
  const lines = run.stderr.split("\n").filter((line) => line.trim().length > 0)
  assert.strictEqual(lines.length, 1, run.stderr)
  return lines[0] ?? ""
}

describe("CLI: unknown flags", () => {
  it.live("are named with the nearest known flag, as `--flag value` and as `--flag=value`, for every command", () =>
    Effect.gen(function*() {
      for (const command of commands) {
        for (const typo of [["--bugdet", "100"], ["--bugdet=100"]]) {
          const line = oneLine(yield* cli([command, ...required[command], ...typo]))
          assert.strictEqual(line, "error: unknown flag --bugdet; did you mean --budget?", command)
        }
      }
    }))

  it.live("before the command's arguments, with no command (replay), and a command's own flags", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        oneLine(yield* cli(["context", "--qeury", "refund", "c"])),
        "error: unknown flag --qeury; did you mean --query?"
      )
      assert.strictEqual(
        oneLine(yield* cli(["--json", "--kraw-turns", "3"])),
        "error: unknown flag --kraw-turns; did you mean --k-raw-turns?"
      )
      assert.strictEqual(
        oneLine(yield* cli(["messages", "c", "--limit", "2", "--befor", "9"])),
        "error: unknown flag --befor; did you mean --before?"
      )
    }))

  it.scoped("with nothing near, the help to read; a value after a flag that takes one is not a flag", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        oneLine(yield* cli(["inspect", "c", "--zzzzzz"])),
        "error: unknown flag --zzzzzz (the flags: effect-chat-memory inspect --help)"
      )
      assert.strictEqual(
        oneLine(yield* cli(["context", "c", "-x"])),
        "error: unknown flag -x (the flags: effect-chat-memory context --help)"
      )
      // `--query`'s value starts with dashes: it is the value, and the conversation is looked up.
      const dir = yield* tempDir
      assert.include(
        oneLine(yield* cli(["context", "c", "--query", "--budget", "--data-dir", join(dir, "db")])),
        "Conversation not found"
      )
    }))
})

describe("CLI: commands that read never create a store", () => {
  it.scoped("`context nope` on an empty directory: one line, and no file is created", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const data = join(dir, "data")
      mkdirSync(data)
      for (const command of ["context", "messages", "inspect", "clear"]) {
        const line = oneLine(yield* cli([command, "nope"], { env: { MEMORY_DATA_DIR: data } }))
        assert.strictEqual(
          line,
          `error: Conversation not found: "nope" (no store at ${data}: replay or chat creates one there; ` +
            "--data-dir or MEMORY_DATA_DIR names another)",
          command
        )
        assert.deepStrictEqual(readdirSync(data), [], command)
      }
      const missing = join(dir, "missing")
      oneLine(yield* cli(["context", "nope", "--data-dir", missing]))
      assert.isFalse(existsSync(missing))
      assert.deepStrictEqual(readdirSync(dir), ["data"])
    }))

  it.scoped("arguments the parser refuses: one line with the others' `error:`, no usage block", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["context"], "error: Missing argument <conversationId>"],
        [["messages", "x", "--limit", "abc"], "error: 'abc' is not a integer"],
        [["context", "a", "extra"], "error: unexpected argument: 'extra'"]
      ]
      for (const [args, expected] of cases) {
        assert.strictEqual(oneLine(yield* cli([...args, "--store", "memory"])), expected, args.join(" "))
      }
    }))

  it.scoped("files that cannot be read or are not what the command takes: one line naming the file and why", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const questions = join(dir, "questions.json")
      writeFileSync(questions, JSON.stringify({ transcript: "t.jsonl", questions: [{ question: "Where?" }] }))
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["eval", questions], `error: ${questions}: not a questions file: questions[0].id: is missing`],
        [["eval", join(dir, "nope.json")], `error: ${join(dir, "nope.json")}: file not found`],
        [["replay", join(dir, "nope.jsonl")], `error: ${join(dir, "nope.jsonl")}: file not found`],
        [["replay", dir], `error: ${dir}: not a file`]
      ]
      for (const [args, expected] of cases) {
        assert.strictEqual(oneLine(yield* cli([...args, "--store", "memory"])), expected, args.join(" "))
      }
    }))
})

describe("the bin's launch", () => {
  it.effect("a package that is not installed is named, with the install command at the range the package declares", () =>
    Effect.gen(function*() {
      // As Node's loader fails an `import()` of a package that is not installed.
      const absent = Object.assign(new Error("Cannot find package '@effect/cli' imported from /app/dist/cli/main.js"), {
        code: "ERR_MODULE_NOT_FOUND"
      })
      assert.deepStrictEqual(Launch.missingPackage(absent), Option.some("@effect/cli"))
      const failure = yield* Effect.flip(Launch.load(() => Promise.reject(absent)))
      assert.strictEqual(
        failure.message,
        "effect-chat-memory: the command line needs @effect/cli, which is not installed: npm install @effect/cli@^0.77.2"
      )
      const file = Object.assign(new Error("Cannot find module '/app/dist/cli/Cli.js' imported from /app/main.js"), {
        code: "ERR_MODULE_NOT_FOUND"
      })
      assert.isTrue(Option.isNone(Launch.missingPackage(file)))
    }).pipe(Effect.provide(NodeContext.layer)))
})
