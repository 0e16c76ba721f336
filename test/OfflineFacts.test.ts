/**
 * The offline facts at the end of the bundled conversation (330 turns, hierarchical strategy,
 * extractive skill): one fact per value, keys named by words (never `type:value`), values with no
 * raw JSON, and every fact traced to the messages it came from.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Transcript from "../src/cli/Transcript.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { bundled } from "./fixtures/cli.js"

describe("offline facts of a long conversation", () => {
  it.effect(
    "no duplicate values, no type:value keys, no raw JSON, every fact with its source seqs",
    () =>
      Effect.gen(function*() {
        const messages = yield* Transcript.parse(bundled, readFileSync(bundled, "utf8"))
        const memory = yield* ChatMemoryService
        for (const turn of Transcript.turnsOf(messages)) {
          yield* memory.addMessages("bundled", turn.map(Transcript.toInput))
          yield* memory.awaitIdle("bundled")
        }
        const { facts } = yield* memory.getContext("bundled")
        assert.isAbove(facts.length, 20)
        const values = facts.map((fact) => fact.value.toLowerCase())
        assert.deepStrictEqual(values.filter((value, i) => values.indexOf(value) !== i), [], "duplicate values")
        for (const fact of facts) {
          assert.match(fact.key, /^[a-z][a-z0-9_]*$/, `key ${fact.key}`)
          assert.notMatch(fact.value, /[{}[\]]|"\w+"\s*:/, `raw JSON in ${fact.key}: ${fact.value}`)
          assert.isAbove(fact.sourceSeqs?.length ?? 0, 0, `no source seqs: ${fact.key} = ${fact.value}`)
        }
      }).pipe(Effect.provide(ChatMemoryLive.layer({ strategy: "hierarchical", store: { _tag: "memory" } })))
  )
})
