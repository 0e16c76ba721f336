/**
 * Optional peer dependencies load when a layer that uses them is built. Importing the package's
 * root loads none, so an app installs only those its layers need.
 */
import { type Array as Arr, Data, Effect, Either, Option } from "effect"

/**
 * The peers' version ranges, equal to `package.json`'s `peerDependencies` (a test checks this). The
 * install hint names them, since a bare `npm install` takes the newest major, which may not be
 * the Effect 3 line.
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
 * Optional peers that could not be loaded, most likely not installed. The message says in one line
 * what to install.
 */
export class MissingPeer extends Data.TaggedError("MissingPeer")<{
  readonly packageNames: Arr.NonEmptyReadonlyArray<PeerName>
  readonly cause: unknown
}> {
  override get message(): string {
    const names = this.packageNames
    const [first] = names
    const listed = names.length === 1 ? first : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`
    const install = names.map((name) => `${name}@${peerRanges[name]}`).join(" ")
    return `${listed} could not be loaded: install ${names.length === 1 ? "it" : "them"} beside ` +
      `effect-chat-memory (npm install ${install}) to use this layer`
  }
}

/** Loads an optional peer. `load` imports it, or the package's module over it. */
export const load = <A>(packageName: PeerName, load: () => Promise<A>): Effect.Effect<A, MissingPeer> =>
  Effect.tryPromise({ try: load, catch: (cause) => new MissingPeer({ packageNames: [packageName], cause }) })

/** Loads two peers a layer needs together. A failure names each one that could not be loaded. */
export const loadBoth = <A, B>(
  first: readonly [PeerName, () => Promise<A>],
  second: readonly [PeerName, () => Promise<B>]
): Effect.Effect<readonly [A, B], MissingPeer> =>
  Effect.flatMap(
    Effect.all([Effect.either(load(...first)), Effect.either(load(...second))]),
    ([a, b]) => {
      if (Either.isRight(a) && Either.isRight(b)) return Effect.succeed([a.right, b.right] as const)
      const missing = [Either.getLeft(a), Either.getLeft(b)].flatMap(Option.toArray)
      const [head, ...tail] = missing.flatMap((peer) => peer.packageNames)
      return Effect.fail(
        new MissingPeer({
          packageNames: head === undefined ? [first[0], second[0]] : [head, ...tail],
          cause: missing.length === 1 ? missing[0]?.cause : missing.map((peer) => peer.cause)
        })
      )
    }
  )
