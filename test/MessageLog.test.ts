/**
 * The in-memory store's message log as a persistent value: appending to a view never changes what
 * an older view holds, nor what a view that was appended to since holds; and the messages it
 * stores, frozen, still compare and hash as values.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Equal, FastCheck as fc, Hash, HashSet } from "effect"
import { ConversationId } from "../src/domain/ConversationId.js"
import { Message } from "../src/domain/Message.js"
import { MessageLog } from "../src/layers/store/internal/log.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"

const id = ConversationId.make("log")
const createdAt = DateTime.unsafeMake(0)
const message = (seq: number) =>
  new Message({ conversationId: id, seq, role: "user", content: `m${seq}`, metadata: {}, tokenCount: 1, createdAt })
const seqs = (log: MessageLog) => log.slice(0, log.size, (m) => m.seq)

describe("MessageLog", () => {
  it("every view keeps what it held, whichever view is appended to, in any order", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })), { maxLength: 30 }), (steps) => {
        const views: Array<{ readonly log: MessageLog; readonly seqs: ReadonlyArray<number> }> = [
          { log: MessageLog.empty(), seqs: [] }
        ]
        for (const [pick, count] of steps) {
          const base = views[pick % views.length]
          if (base === undefined) continue
          const first = (base.seqs.at(-1) ?? 0) + 1
          const added = Array.from({ length: count }, (_, k) => first + k)
          views.push({ log: base.log.append(added.map(message)), seqs: [...base.seqs, ...added] })
          for (const view of views) assert.deepStrictEqual(seqs(view.log), view.seqs)
        }
      })
    )
  })

  it("seeks by seq over gaps, and filters into a new log", () => {
    const log = MessageLog.of([1, 2, 5, 9].map(message))
    assert.deepStrictEqual([0, 1, 2, 4, 5, 8, 9, 10].map((seq) => log.indexAfter(seq)), [0, 1, 2, 2, 3, 3, 4, 4])
    assert.deepStrictEqual([1, 3, 9, 10].map((seq) => log.has(seq)), [true, false, true, false])
    const odd = log.filter((m) => m.seq % 2 === 1)
    assert.deepStrictEqual(seqs(odd), [1, 5, 9])
    assert.deepStrictEqual(seqs(log), [1, 2, 5, 9])
    assert.strictEqual(log.last()?.seq, 9)
    assert.isUndefined(MessageLog.empty().last())
  })
})

describe("frozen stored messages", () => {
  it.effect("compare and hash structurally, and take no change", () =>
    Effect.gen(function*() {
      const { repository } = yield* MemoryStore.make
      const [stored] = (yield* repository.appendMessages(id, [
        { role: "user", content: "hello", metadata: {}, tokenCount: 2, createdAt }
      ])).messages
      const [read] = yield* repository.listMessages(id, {})
      assert.isTrue(stored !== undefined && Object.isFrozen(stored))
      assert.isFalse(Reflect.set(read ?? {}, "content", "changed"))
      // Metadata objects compare by reference (plain JSON, not Effect data): share it, unvalidated
      // (validation would rebuild it).
      const copy = new Message(
        { ...message(1), content: "hello", tokenCount: 2, metadata: read?.metadata ?? {} },
        { disableValidation: true }
      )
      assert.isTrue(Equal.equals(read, copy))
      assert.strictEqual(Hash.hash(read), Hash.hash(copy))
      assert.isTrue(HashSet.has(HashSet.make(copy), read))
    }))
})
