/**
 * Optional peer dependencies (PGlite, `@effect/sql-pg`, `gpt-tokenizer`) are loaded by the layers
 * that use them, when they are built: importing the package's root loads none of them, and an app
 * installs only the ones its layers need.
 */
import { Data, Effect } from "effect"

/**
 * An optional peer dependency that could not be loaded: not installed, most likely.
 */
export class MissingPeer extends Data.TaggedError("MissingPeer")<{
  readonly packageName: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `${this.packageName} could not be loaded: install it beside effect-chat-memory ` +
      `(npm install ${this.packageName}) to use this layer`
  }
}

/** Loads an optional peer dependency (`load` is the `import()` of it, or of our module over it). */
export const load = <A>(packageName: string, load: () => Promise<A>): Effect.Effect<A, MissingPeer> =>
  Effect.tryPromise({ try: load, catch: (cause) => new MissingPeer({ packageName, cause }) })
