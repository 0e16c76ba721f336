/**
 * The optional peers a layer loads when it is built: the install hint of one that is missing names
 * the range the package declares, so that it never takes a major of another Effect line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import * as OptionalPeer from "../src/layers/internal/optionalPeer.js"

const Manifest = Schema.parseJson(Schema.Struct({
  peerDependencies: Schema.Record({ key: Schema.String, value: Schema.String })
}))

describe("optional peers", () => {
  it("the ranges of the install hints are package.json's", () => {
    const { peerDependencies } = Schema.decodeUnknownSync(Manifest)(
      readFileSync(new URL("../package.json", import.meta.url), "utf8")
    )
    for (const [name, range] of Object.entries(OptionalPeer.peerRanges)) {
      assert.strictEqual(range, peerDependencies[name], name)
    }
  })

  it.effect("a peer that cannot be loaded fails with the install command at its range", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(
        OptionalPeer.load("@effect/sql-pg", () => Promise.reject(new Error("Cannot find package '@effect/sql-pg'")))
      )
      assert.strictEqual(failure._tag, "MissingPeer")
      assert.include(failure.message, "npm install @effect/sql-pg@^0.53.0")
    }))
})
