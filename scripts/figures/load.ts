/**
 * Reads the committed runs: the bench's JSON and one `eval` JSON per question set.
 */
import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { benchFile, evalDirectory, FiguresError, inRoot } from "./files.js"
import { BenchRun, EvalRun, type Runs } from "./runs.js"

const decode = <A, I>(schema: Schema.Schema<A, I>, path: string) => (text: string) =>
  Schema.decodeUnknown(Schema.parseJson(schema))(text).pipe(
    Effect.mapError((error) => new FiguresError({ reason: `${path}: ${error.message}` }))
  )

const readText = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(inRoot(path))).pipe(
    Effect.mapError((error) => new FiguresError({ reason: `${path}: ${error.message}` }))
  )

/** The runs, the eval sets in the order of their names. */
export const load: Effect.Effect<Runs, FiguresError, FileSystem.FileSystem> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const bench = yield* Effect.flatMap(readText(benchFile), decode(BenchRun, benchFile))
  const names = yield* fs.readDirectory(inRoot(evalDirectory)).pipe(
    Effect.mapError((error) => new FiguresError({ reason: `${evalDirectory}: ${error.message}` }))
  )
  const evals = yield* Effect.forEach(
    names.filter((name) => name.endsWith(".json")).sort(),
    (name) => {
      const path = `${evalDirectory}/${name}`
      return Effect.flatMap(readText(path), decode(EvalRun, path))
    }
  )
  return { bench, evals }
})
