/**
 * The questions files shipped with the examples: every answer is said, word for word, in the turn
 * the file says it was stated, and nowhere from the turn after its last statement to the turn it
 * is asked (a tool call's arguments included: the context shows them), at least 60 turns before.
 * A question that fails this measures the window, not the memory.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"
import * as Eval from "../src/cli/Eval.js"
import * as Transcript from "../src/cli/Transcript.js"
import type { MessageInput } from "../src/domain/Message.js"

const files = ["conversation.questions.json", "offsite.questions.json", "trip.questions.json"].map((name) =>
  fileURLToPath(new URL(`../examples/${name}`, import.meta.url))
)

/** Everything a turn says, as a context would show it: contents and tool calls' arguments. */
const said = (turn: ReadonlyArray<MessageInput>): string =>
  turn.map((message) =>
    [message.content, ...(message.metadata?.toolCalls ?? []).map((call) => JSON.stringify(call.params))].join(" ")
  ).join("\n")

describe("questions files", () => {
  for (const path of files) {
    it.effect(`${path.split("/").pop()}: each answer stated where it says, then unsaid for 60 turns or more`, () =>
      Effect.gen(function*() {
        const file = yield* Eval.readQuestions(path)
        const turns = Transcript.turnsOf(yield* Transcript.read(file.transcript)).map(said)
        assert.isAtLeast(file.questions.length, 36)
        for (const q of file.questions) {
          assert.isAtLeast(q.askedAfterTurn - q.lastStatedTurn, 60, q.id)
          assert.isAtMost(q.askedAfterTurn, turns.length, q.id)
          assert.isAtMost(q.statedAtTurn, q.lastStatedTurn, q.id)
          for (const answer of q.answers) {
            assert.include(turns[q.statedAtTurn - 1], answer, `${q.id} at turn ${q.statedAtTurn}`)
            const again = turns.slice(q.lastStatedTurn, q.askedAfterTurn).findIndex((text) => text.includes(answer))
            assert.strictEqual(again, -1, `${q.id}: "${answer}" said again at turn ${q.lastStatedTurn + again + 1}`)
          }
        }
      }).pipe(Effect.provide(NodeContext.layer)))
  }
})
