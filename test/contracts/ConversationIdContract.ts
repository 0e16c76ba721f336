/**
 * The part of the log's contract about conversation ids, driven through the public service
 * over the store under test: which ids are accepted (the same table on every store), and that two
 * distinct accepted ids never share messages, whatever their Unicode.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { ConversationId } from "../../src/domain/ConversationId.js"
import type * as Store from "../../src/layers/store/Store.js"
import type * as ChatMemoryService from "../../src/services/ChatMemoryService.js"
import { withMemory } from "../fixtures/layers.js"

/** The outcome of one `addMessages` as a comparable value: the refused field and reason, or the contents stored. */
const outcome = (memory: ChatMemoryService.ChatMemoryService.Service, id: string, content: string) =>
  Effect.gen(function*() {
    const added = yield* Effect.either(memory.addMessages(id, [{ role: "user", content }]))
    if (Either.isLeft(added)) {
      const error = added.left
      return error._tag === "DataValidationError"
        ? { refused: `${error.path}: ${error.reason}` }
        : { failed: error._tag }
    }
    const read = yield* memory.getMessages(id)
    return { stored: read.map((m) => [m.conversationId, m.content]) }
  })

const accepted = (id: string) => Either.isRight(Schema.decodeUnknownEither(ConversationId)(id))

/** Registers the conversation-id tests in a contract suite. */
export const conversationIdContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect(
    "ids are accepted or refused alike on every store, and an accepted id reads back as given",
    () =>
      withMemory((memory) =>
        Effect.gen(function*() {
          const run = randomUUID()
          const unpaired = "conversationId: must be well-formed Unicode (no unpaired surrogates)"
          // [id, the refusal expected, or undefined when the id must be accepted]
          const table: ReadonlyArray<readonly [string, string | undefined]> = [
            // The pair that named one conversation on the SQL stores: both lone high surrogates.
            [`${run}-s\uD800`, unpaired],
            [`${run}-s\uDBFF`, unpaired],
            [`${run}-\uDC00-low`, unpaired],
            [`${run}-\uDFFF\uD800-reversed`, unpaired],
            [`${run}-a\u0000b`, "conversationId: must not contain NUL (U+0000) characters"],
            [`${run}-bell\u0007`, "conversationId: must not contain control characters"],
            ["", "conversationId: must not be empty"],
            [`${run}-${"x".repeat(255)}`, "conversationId: must be at most 255 characters"],
            // Accepted: a surrogate pair, the replacement character itself, both normal forms of é.
            [`${run}-emoji-\uD83D\uDE00`, undefined],
            [`${run}-s\uFFFD`, undefined],
            [`${run}-caf\u00E9`, undefined],
            [`${run}-cafe\u0301`, undefined],
            [`${run}-${"y".repeat(255 - run.length - 1)}`, undefined]
          ]
          for (const [index, [id, refusal]] of table.entries()) {
            const content = `message ${index}`
            const result = yield* outcome(memory, id, content)
            assert.deepStrictEqual(
              result,
              refusal === undefined ? { stored: [[id, content]] } : { refused: refusal },
              `id #${index}`
            )
          }
          // Refused ids stored nothing: not even under the id a SQL driver would have made of them.
          const replaced = yield* Effect.flip(memory.getMessages(`${run}-s\uFFFD-none`))
          assert.strictEqual(replaced._tag, "ConversationNotFoundError")
          // The two normal forms of "café" are two conversations: ids are compared as given.
          const nfc = yield* memory.getMessages(`${run}-caf\u00E9`)
          const nfd = yield* memory.getMessages(`${run}-cafe\u0301`)
          assert.deepStrictEqual([nfc.map((m) => m.content), nfd.map((m) => m.content)], [["message 10"], [
            "message 11"
          ]])
        })
      )
  )

  // Ids drawn from an alphabet where collisions are likely if anything maps two ids to one:
  // surrogate halves, the replacement character, composed and decomposed letters, case variants.
  const unit = fc.constantFrom(
    "a",
    "A",
    "\u00E9",
    "e\u0301",
    "\uFFFD",
    "\uD800",
    "\uDBFF",
    "\uDC00",
    "\uD83D\uDE00",
    "\u212B",
    "\u00C5",
    " ",
    "\u0000",
    "-"
  )
  const idSuffix = fc.array(unit, { minLength: 0, maxLength: 6 }).map((units) => units.join(""))

  it.effect.prop(
    "no two distinct accepted ids share messages (random Unicode ids)",
    { suffixes: fc.uniqueArray(idSuffix, { minLength: 2, maxLength: 8 }) },
    ({ suffixes }) =>
      withMemory((memory) =>
        Effect.gen(function*() {
          const prefix = `${randomUUID()}-`
          const ids = suffixes.map((suffix) => prefix + suffix)
          const added = new Map<string, string>()
          for (const [index, id] of ids.entries()) {
            const result = yield* Effect.either(memory.addMessages(id, [{ role: "user", content: `message ${index}` }]))
            // The store accepts exactly what the schema accepts.
            assert.strictEqual(Either.isRight(result), accepted(id))
            if (Either.isRight(result)) added.set(id, `message ${index}`)
          }
          for (const [id, content] of added) {
            const read = yield* memory.getMessages(id)
            assert.deepStrictEqual(read.map((m) => [m.conversationId, m.content]), [[id, content]])
          }
        })
      ),
    { fastCheck: { numRuns: 40 } }
  )
}
