/**
 * The part of the log's contract about JSON metadata: every store returns it in one canonical
 * form (object keys in `jsonb` order, `-0` as `0`), the same expected value on all of them; what a
 * caller passes in or reads out never aliases what is stored; and hostile metadata is refused
 * alike on every store, through the public service.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import type { MessageMetadata } from "../../src/domain/Message.js"
import type * as Store from "../../src/layers/store/Store.js"
import type * as ChatMemoryService from "../../src/services/ChatMemoryService.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { withMemory } from "../fixtures/layers.js"
import { freshId, newMessage } from "../fixtures/messages.js"
import { hostileValues } from "../reliability/badInputs.js"

/**
 * `addMessages` as a caller outside the type system sees it. Method parameters are compared
 * bivariantly, so the service is this without a cast.
 */
interface UntypedAdd {
  addMessages(
    conversationId: string,
    messages: ReadonlyArray<unknown>
  ): ReturnType<ChatMemoryService.ChatMemoryService.Service["addMessages"]>
}
const untyped = (memory: ChatMemoryService.ChatMemoryService.Service): UntypedAdd => memory

/**
 * Metadata with keys in no particular order, `-0`s, Unicode keys (including a pair of keys that
 * UTF-16 and UTF-8 order differently), integer-like keys, nested arrays, extreme numbers.
 */
const oddMetadata = (): MessageMetadata => ({
  modelVariant: "mini",
  toolCallId: "call-1",
  attributes: {
    zeta: 1,
    b: -0,
    "10": "ten",
    "2": "two",
    "é": "e-acute",
    ab: [3, -0, { y: 1, x: [-0, []] }],
    z: null,
    "日本": "ja",
    "😀": "emoji",
    "": "empty",
    "\uFF61a": "halfwidth full stop, then a",
    a: { bb: 1, c: 2, aa: 3 },
    numbers: [1e21, 5e-324, 1.7976931348623157e308, 0.1, -1.5e-7, 9007199254740991, -0],
    text: "quote \" backslash \\ newline \n tab \t separator \u2028 emoji 😀",
    "01": "not an index",
    "-1": "not an index either",
    "4294967294": "the largest index",
    "4294967295": "not an index",
    nested: [[[1], [2, [3]]], [], {}]
  },
  toolName: "search",
  isError: false
})

/**
 * `oddMetadata` as every store returns it, written in that order: keys by length in UTF-8 bytes,
 * then by bytes (`"\uFF61a"`, 4 bytes from 0xEF, before `"😀"`, 4 bytes from 0xF0, though its
 * UTF-16 code unit 0xFF61 is above the emoji's 0xD83D), then JavaScript moves the array indices
 * `"2"`, `"10"` and `"4294967294"` to the front (not `"01"`, `"-1"` or `"4294967295"`).
 */
const canonicalMetadata: MessageMetadata = {
  isError: false,
  toolName: "search",
  attributes: {
    "2": "two",
    "10": "ten",
    "4294967294": "the largest index",
    "": "empty",
    a: { c: 2, aa: 3, bb: 1 },
    b: 0,
    z: null,
    "-1": "not an index either",
    "01": "not an index",
    ab: [3, 0, { x: [0, []], y: 1 }],
    "é": "e-acute",
    text: "quote \" backslash \\ newline \n tab \t separator \u2028 emoji 😀",
    zeta: 1,
    "\uFF61a": "halfwidth full stop, then a",
    "😀": "emoji",
    nested: [[[1], [2, [3]]], [], {}],
    "日本": "ja",
    numbers: [1e21, 5e-324, 1.7976931348623157e308, 0.1, -1.5e-7, 9007199254740991, 0],
    "4294967295": "not an index"
  },
  toolCallId: "call-1",
  modelVariant: "mini"
}

/** Equal to `expected`, `-0` apart from `0`, and with every key in the same order. */
const assertCanonical = (actual: unknown, expected: unknown, message: string) => {
  assert.deepStrictEqual(actual, expected, message)
  assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected), `${message}: key order`)
}

/** Registers the JSON metadata tests in a contract suite. */
export const jsonContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("metadata reads back in the one canonical form, the same value on every store", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("json")
      yield* repo.appendMessages(id, [
        newMessage("system", "rules", oddMetadata()),
        newMessage("tool", "result", oddMetadata()),
        newMessage("user", "plain", {}),
        newMessage("user", "negative zero key", { attributes: { "-0": -0, "0": [-0] } })
      ])
      const expected = [canonicalMetadata, canonicalMetadata, {}, { attributes: { "0": [0], "-0": 0 } }]
      const oldest = yield* repo.listMessages(id, {})
      assertCanonical(oldest.map((m) => m.metadata), expected, "listMessages")
      const newest = yield* repo.listMessages(id, { from: "newest", limit: 3 })
      assertCanonical(newest.map((m) => m.metadata), expected.slice(1), "listMessages from the newest")
      const window = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 1_000_000 })
      assertCanonical(window.system.map((m) => m.metadata), expected.slice(0, 1), "readWindow, system")
      assertCanonical(window.recent.map((m) => m.metadata), expected.slice(1), "readWindow, recent")
    }))

  it.effect("what was appended and what was read are copies: changing them changes nothing stored", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("json-copies")
      const attributes = { list: [1, { n: 2 }] }
      const message = newMessage("system", "rules", { attributes })
      const appended = yield* repo.appendMessages(id, [message, newMessage("user", "hello", { attributes })])
      const expected = [{ attributes: { list: [1, { n: 2 }] } }, { attributes: { list: [1, { n: 2 }] } }]
      const mutate = (metadata: MessageMetadata | undefined) => {
        const list = metadata?.attributes?.["list"]
        if (Array.isArray(list)) {
          Reflect.set(list, 0, 99)
          Reflect.set(list[1], "n", 99)
          list.push("added")
        }
        Reflect.set(metadata?.attributes ?? {}, "added", true)
        Reflect.set(metadata ?? {}, "modelVariant", "changed")
      }
      // What the caller passed in, what append returned, and what each read returned.
      mutate(message.metadata)
      for (const m of appended.messages) {
        mutate(m.metadata)
        Reflect.set(m, "content", "changed")
      }
      for (const m of yield* repo.listMessages(id, {})) {
        mutate(m.metadata)
        Reflect.set(m, "content", "changed")
      }
      const window = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 1_000_000 })
      for (const m of [...window.system, ...window.recent]) {
        mutate(m.metadata)
        Reflect.set(m, "content", "changed")
      }
      const again = yield* repo.listMessages(id, {})
      assertCanonical(again.map((m) => m.metadata), expected, "after every change")
      assert.deepStrictEqual(again.map((m) => m.content), ["rules", "hello"])
    }))

  it.effect("addMessages returns, and getMessages reads, the same canonical metadata on every store", () =>
    withMemory((memory) =>
      Effect.gen(function*() {
        const id = `json-${randomUUID()}`
        const added = yield* memory.addMessages(id, [
          { role: "user", content: "look it up" },
          { role: "tool", content: "found", metadata: oddMetadata() }
        ])
        assertCanonical(added.map((m) => m.metadata), [{}, canonicalMetadata], "addMessages")
        const read = yield* memory.getMessages(id)
        assertCanonical(read.map((m) => m.metadata), [{}, canonicalMetadata], "getMessages")
      })
    ))

  it.effect("hostile metadata is refused alike on every store, naming its path, and nothing is stored", () =>
    withMemory((memory) =>
      Effect.gen(function*() {
        for (const hostile of hostileValues) {
          const id = `json-hostile-${randomUUID()}`
          const attributes = { fine: [1, 2], when: hostile.make() }
          const outcome = yield* Effect.either(
            untyped(memory).addMessages(id, [
              { role: "user", content: "valid" },
              { role: "user", content: "hostile", metadata: { attributes } }
            ])
          )
          assert.deepStrictEqual(
            Either.isLeft(outcome) && outcome.left._tag === "DataValidationError"
              ? { path: outcome.left.path, reason: outcome.left.reason }
              : outcome,
            { path: `messages[1].metadata.attributes.when${hostile.path}`, reason: hostile.reason },
            hostile.name
          )
          const stored = yield* Effect.flip(memory.getMessages(id))
          assert.strictEqual(stored._tag, "ConversationNotFoundError", hostile.name)
        }
      })
    ))
}
