/**
 * Optional peer dependencies (PGlite, `@effect/sql-pg`, `gpt-tokenizer`) are loaded by the layers
 * that use them, when they are built: importing the package's root loads none of them, and an app
 * installs only the ones its layers need.
 */
import { Data, Effect } from "effect"

/**
 * The ranges the package declares for the peers its layers load, as in `package.json`'s
 * `peerDependencies` (`test/optionalPeer.test.ts` holds them equal): the install hint names them,
 * since a bare `npm install` takes the newest major, which may not be the Effect 3 line.
 */
export const peerRanges = {
  "@effect/sql-pg": "^0.53.0",
  "@electric-sql/pglite": "^0.5.14",
  "gpt-tokenizer": "^2.9.0",
  "@effect/ai-openai": "^0.41.0"
} as const

/** A peer dependency a layer loads when it is built. */
export type PeerName = keyof typeof peerRanges

/**
 * An optional peer dependency that could not be loaded: not installed, most likely.
 */
export class MissingPeer extends Data.TaggedError("MissingPeer")<{
  readonly packageName: PeerName
  readonly cause: unknown
}> {
  override get message(): string {
    return `${this.packageName} could not be loaded: install it beside effect-chat-memory ` +
      `(npm install ${this.packageName}@${peerRanges[this.packageName]}) to use this layer`
  }
}

/** Loads an optional peer dependency (`load` is the `import()` of it, or of our module over it). */
export const load = <A>(packageName: PeerName, load: () => Promise<A>): Effect.Effect<A, MissingPeer> =>
  Effect.tryPromise({ try: load, catch: (cause) => new MissingPeer({ packageName, cause }) })
