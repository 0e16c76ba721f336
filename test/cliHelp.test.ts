/**
 * The command line's help as a person reads it: `--help` of the program and of every command fits
 * 60 lines, and every argument and flag says what it is for.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { cli } from "./fixtures/cli.js"

const commands = ["replay", "eval", "context", "messages", "inspect", "clear", "chat", "mcp"] as const

/** The memory flags every command takes (each overrides a variable). */
const memoryFlags = [
  "--strategy",
  "--store",
  "--data-dir",
  "--budget",
  "--k-raw-turns",
  "--threshold",
  "--cap",
  "--high-water",
  "--low-water",
  "--view",
  "--mode",
  "--recall",
  "--recall-budget",
  "--tokenizer",
  "--summarizer-model"
]

/** What is said about a definition besides what it is for. */
const notes = /^(\((optional|required|default: [^)]*)\)\s*)*$/

/**
 * The definitions of the sections with these titles: each an entry line (`  name  description`)
 * and the lines that continue its description (indented further).
 */
const definitions = (text: string, titles: ReadonlyArray<string>) => {
  const out: Array<{ readonly name: string; description: string }> = []
  let inside = false
  let column = 0
  for (const line of text.split("\n")) {
    if (/^\S/.test(line) || line.length === 0) {
      inside = titles.includes(line.trim())
      continue
    }
    if (!inside) continue
    const entry = /^ {2}(\S.*?)(?: {2,}(.*))?$/.exec(line)
    const last = out.at(-1)
    if (last !== undefined && line.startsWith(" ".repeat(column + 2)) && line.trim().length > 0) {
      last.description = `${last.description} ${line.trim()}`.trim()
    } else if (entry !== null) {
      column = (entry[2] === undefined ? line.length : line.indexOf(entry[2], 2 + (entry[1]?.length ?? 0))) - 2
      out.push({ name: entry[1] ?? "", description: entry[2] ?? "" })
    }
  }
  return out
}

describe("CLI: help", () => {
  it.live("the program's: its commands, each with what it does, in at most 60 lines", () =>
    Effect.gen(function*() {
      const run = yield* cli(["--help"])
      assert.strictEqual(run.code, 0, run.stderr)
      const lines = run.stdout.trimEnd().split("\n")
      assert.isAtMost(lines.length, 60, run.stdout)
      const listed = definitions(run.stdout, ["COMMANDS"])
      assert.deepStrictEqual(listed.map((command) => command.name), [...commands])
      for (const command of listed) assert.isAbove(command.description.length, 10, command.name)
    }))

  for (const command of commands) {
    it.live(`${command} --help: every argument and flag described, in at most 60 lines`, () =>
      Effect.gen(function*() {
        const run = yield* cli([command, "--help"])
        assert.strictEqual(run.code, 0, run.stderr)
        const lines = run.stdout.trimEnd().split("\n")
        assert.isAtMost(lines.length, 60, run.stdout)
        assert.include(run.stdout, `effect-chat-memory ${command} [flags]`)
        const described = definitions(run.stdout, ["ARGUMENTS", "FLAGS", "BUILT-IN FLAGS"])
        assert.isAbove(described.length, memoryFlags.length, run.stdout)
        for (const { description, name } of described) {
          assert.notMatch(description, notes, `${command}: ${name} says nothing of what it is for`)
        }
        const names = described.map(({ name }) => name).join(" ")
        for (const flag of [...memoryFlags, "--help", "--version", "--log-level"]) assert.include(names, flag)
      }))
  }
})
