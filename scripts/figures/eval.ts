/**
 * Runs `eval` on the bundled question sets as `npm run eval -- <file> --json` does (offline skill,
 * default settings) and writes each set's JSON, with the machine and the code it ran on, to
 * `figures/eval/<set>.json`. Arguments: the sets to run (`tutor renovation`), every
 * `examples/*.questions.json` by default; `--concurrency n` runs n sets at once (default 1).
 */
import { Command, FileSystem } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, DateTime, Effect, Schema, Stream } from "effect"
import { code as readCode, machine } from "../../bench/provenance.js"
import { evalDirectory, FiguresError, inRoot, questionsSuffix, root, setOf } from "./files.js"

/** Variables that would change what `eval` measures: a model instead of the offline skill, or other settings. */
const changesTheRun = (name: string): boolean => name.startsWith("MEMORY_") || name.startsWith("OPENAI_")

const EvalOutput = Schema.parseJson(Schema.Struct({ results: Schema.Array(Schema.Unknown) }, {
  key: Schema.String,
  value: Schema.Unknown
}))

const parseArgs = (args: ReadonlyArray<string>) => {
  const at = args.indexOf("--concurrency")
  const concurrency = at === -1 ? 1 : Math.max(1, Number.parseInt(args[at + 1] ?? "1", 10) || 1)
  const sets = args.filter((arg, i) => arg !== "--concurrency" && (at === -1 || i !== at + 1))
  return { concurrency, sets }
}

const runSet = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const set = setOf(file)
    const startedAt = DateTime.formatIso(yield* DateTime.now)
    const host = machine()
    const code = yield* readCode
    const started = performance.now()
    const args = ["eval", `examples/${file}`, "--json"]
    const [stdout, exitCode] = yield* Effect.scoped(Effect.gen(function*() {
      const child = yield* Command.start(
        Command.make("node", "--import", "tsx", "src/cli/main.ts", ...args).pipe(
          Command.workingDirectory(root),
          Command.stderr("inherit")
        )
      )
      return yield* Effect.all([Stream.mkString(Stream.decodeText(child.stdout)), child.exitCode], {
        concurrency: 2
      })
    }))
    if (exitCode !== 0) return yield* new FiguresError({ reason: `${set}: eval exited with code ${exitCode}` })
    const output = yield* Schema.decodeUnknown(EvalOutput)(stdout)
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
    const run = { set, command: `npm run eval -- ${args.slice(1).join(" ")}`, startedAt, seconds, machine: host, code }
    yield* fs.writeFileString(
      inRoot(`${evalDirectory}/${set}.json`),
      `${JSON.stringify({ ...run, eval: output }, null, 2)}\n`
    )
    yield* Console.log(`${set}: ${seconds} s, written to ${evalDirectory}/${set}.json`)
  })

const main = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const changing = Object.keys(process.env).filter(changesTheRun)
  if (changing.length > 0) {
    return yield* new FiguresError({
      reason: `unset ${changing.join(", ")}: the published figures are the offline defaults'`
    })
  }
  const { concurrency, sets } = parseArgs(process.argv.slice(2))
  const files = (yield* fs.readDirectory(inRoot("examples"))).filter((name) => name.endsWith(questionsSuffix)).sort()
  const unknown = sets.filter((set) => !files.some((file) => setOf(file) === set))
  if (unknown.length > 0) {
    return yield* new FiguresError({ reason: `no question set ${unknown.join(", ")}: ${files.map(setOf).join(", ")}` })
  }
  const chosen = sets.length === 0 ? files : files.filter((file) => sets.includes(setOf(file)))
  yield* fs.makeDirectory(inRoot(evalDirectory), { recursive: true })
  yield* Effect.forEach(chosen, runSet, { concurrency, discard: true })
})

NodeRuntime.runMain(main.pipe(Effect.provide(NodeContext.layer)))
