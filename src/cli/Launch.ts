/**
 * How the bin starts. The command line needs `@effect/cli`, an optional peer that a library-only
 * app does not install. Without it, the bin says in one line which package is missing and how to
 * install it, instead of Node's stack trace. This module imports nothing of the command line, so
 * it runs without `@effect/cli`.
 */
import { FileSystem } from "@effect/platform"
import { Data, Effect, Option, Predicate, Schema } from "effect"
import { fileURLToPath } from "node:url"

/** A package the command line imports is not installed. */
export class MissingPackage extends Data.TaggedError("MissingPackage")<{
  readonly packageName: string
  readonly install: string
}> {
  override get message(): string {
    return `effect-chat-memory: the command line needs ${this.packageName}, which is not installed: ${this.install}`
  }
}

/** The package an `import()` could not find (Node's `ERR_MODULE_NOT_FOUND`), if that is why it failed. */
export const missingPackage = (cause: unknown): Option.Option<string> => {
  if (!Predicate.hasProperty(cause, "code") || cause.code !== "ERR_MODULE_NOT_FOUND") return Option.none()
  const text = Predicate.hasProperty(cause, "message") && typeof cause.message === "string" ? cause.message : ""
  // Node says "Cannot find package 'name' imported from …". A missing file of ours is another failure.
  const found = /^Cannot find package '((?:@[^/']+\/)?[^/']+)[^']*'/.exec(text)
  return Option.fromNullable(found?.[1])
}

const Manifest = Schema.parseJson(Schema.Struct({
  peerDependencies: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}))

/** The package's own manifest, at `../../package.json` from both `src/cli/` and `dist/cli/`. */
const manifest = new URL("../../package.json", import.meta.url)

/**
 * The command that installs `packageName` at the range the package declares for it. A bare
 * `npm install` would take the newest major, which may not be the Effect 3 line.
 */
export const installCommand = (packageName: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(fileURLToPath(manifest))
    const { peerDependencies } = yield* Schema.decode(Manifest)(text)
    return Option.fromNullable(peerDependencies?.[packageName])
  }).pipe(
    Effect.option,
    Effect.map((range) =>
      `npm install ${packageName}${Option.match(Option.flatten(range), { onNone: () => "", onSome: (r) => `@${r}` })}`
    )
  )

/**
 * Loads a module of the command line with `load`, its `import()`. A package it imports that is not
 * installed fails with `MissingPackage`, naming it and its install command. Any other failure to
 * load is a defect.
 */
export const load = <A>(load: () => Promise<A>): Effect.Effect<A, MissingPackage, FileSystem.FileSystem> =>
  Effect.tryPromise({ try: load, catch: (cause) => cause }).pipe(
    Effect.catchAll((cause) =>
      Option.match(missingPackage(cause), {
        onNone: () => Effect.die(cause),
        onSome: (packageName) =>
          Effect.flatMap(
            installCommand(packageName),
            (install) => Effect.fail(new MissingPackage({ packageName, install }))
          )
      })
    )
  )
