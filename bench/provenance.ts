/**
 * What a run of the benchmarks or of the question sets ran on: the machine, and the code (the
 * package's version, the commit and its date, and whether the tree had uncommitted changes
 * outside `figures/`, where the runs write).
 */
import { Command, FileSystem } from "@effect/platform"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import { Effect, Option, Schema } from "effect"
import { availableParallelism, cpus, loadavg, release, totalmem, type } from "node:os"

/** The machine a run ran on. */
export const machine = () => ({
  cpu: cpus()[0]?.model ?? "unknown",
  cores: availableParallelism(),
  memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
  node: process.version,
  os: `${type()} ${release()} (${process.platform}/${process.arch})`,
  loadAverage1mAtStart: Number((loadavg()[0] ?? 0).toFixed(2))
})

/** The code a run ran: null fields where git cannot say (no repository, no git). */
export interface Code {
  readonly version: string
  readonly commit: string | null
  readonly commitDate: string | null
  readonly uncommittedChanges: boolean | null
}

const PackageJson = Schema.parseJson(Schema.Struct({ version: Schema.String }))

const git = (...args: Array<string>) =>
  Command.string(Command.make("git", ...args)).pipe(
    Effect.map((out) => out.trim()),
    Effect.option
  )

/** The code of the working tree the run starts in. */
export const code: Effect.Effect<Code, never, FileSystem.FileSystem | CommandExecutor> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const version = yield* fs.readFileString("package.json").pipe(
    Effect.flatMap(Schema.decodeUnknown(PackageJson)),
    Effect.map((pkg) => pkg.version),
    Effect.orElseSucceed(() => "unknown")
  )
  const commit = yield* git("rev-parse", "HEAD")
  const commitDate = yield* git("log", "-1", "--format=%cI")
  // The runs' own output (figures/) is no change to the code they ran.
  const status = yield* git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!figures")
  return {
    version,
    commit: Option.getOrNull(commit),
    commitDate: Option.getOrNull(commitDate),
    uncommittedChanges: Option.getOrNull(Option.map(status, (s) => s.length > 0))
  }
})
