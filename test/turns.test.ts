import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { groupTurns } from "../src/domain/internal/turns.js"
import { Message, type MessageMetadata, type Role } from "../src/domain/Message.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import { loadRecentTurns } from "../src/strategies/internal/context/window.js"
import { newestThatFit } from "../src/strategies/internal/turns.js"
import { freshId, newMessage } from "./fixtures/messages.js"

const id = ConversationId.make("turns")

const message = (seq: number, role: Role, metadata: MessageMetadata = {}, tokenCount = 1) =>
  new Message({
    conversationId: id,
    seq,
    role,
    content: `${role} ${seq}`,
    metadata,
    tokenCount,
    createdAt: DateTime.unsafeMake(0)
  })

const call = (seq: number, ...ids: Array<string>) =>
  message(seq, "assistant", { toolCalls: ids.map((callId) => ({ id: callId, name: "t", params: null })) })
const result = (seq: number, callId: string) => message(seq, "tool", { toolCallId: callId })
const seqs = (turns: ReturnType<typeof groupTurns>["turns"]) => turns.map((t) => t.messages.map((m) => m.seq))

describe("groupTurns", () => {
  it("starts a turn at each user message; an opening without one is a turn of its own", () => {
    const grouped = groupTurns([
      message(1, "assistant"),
      message(2, "user"),
      message(3, "assistant"),
      message(4, "user"),
      message(5, "system"),
      message(6, "assistant")
    ])
    assert.deepStrictEqual(seqs(grouped.turns), [[1], [2, 3], [4, 5, 6]])
    assert.isTrue(grouped.firstTurnComplete)
  })

  it("keeps a tool call with its result even across a user message", () => {
    const grouped = groupTurns([
      message(1, "user"),
      call(2, "a"),
      message(3, "user"),
      result(4, "a"),
      message(5, "user"),
      message(6, "assistant")
    ])
    assert.deepStrictEqual(seqs(grouped.turns), [[1, 2, 3, 4], [5, 6]])
  })

  it("leaves summary messages out", () => {
    const grouped = groupTurns([message(1, "user"), message(2, "summary"), message(3, "assistant")])
    assert.deepStrictEqual(seqs(grouped.turns), [[1, 3]])
  })

  it("marks the first turn of a partial read incomplete when it may be cut", () => {
    assert.isFalse(groupTurns([message(5, "assistant"), message(6, "user")], { partial: true }).firstTurnComplete)
    // A result whose call is before the run glues everything up to it to the cut first turn.
    const orphan = groupTurns(
      [message(5, "user"), message(6, "assistant"), message(7, "user"), result(8, "x"), message(9, "user")],
      { partial: true }
    )
    assert.isFalse(orphan.firstTurnComplete)
    assert.deepStrictEqual(seqs(orphan.turns), [[5, 6, 7, 8], [9]])
    assert.isTrue(groupTurns([message(5, "user"), message(6, "assistant")], { partial: true }).firstTurnComplete)
  })

  it("newestThatFit takes the longest run of newest turns within the budget", () => {
    const turns = groupTurns([
      message(1, "user", {}, 5),
      message(2, "user", {}, 1),
      message(3, "user", {}, 2),
      message(4, "user", {}, 3)
    ]).turns
    assert.strictEqual(newestThatFit(turns, 0), 0)
    assert.strictEqual(newestThatFit(turns, 3), 1)
    assert.strictEqual(newestThatFit(turns, 5), 2)
    assert.strictEqual(newestThatFit(turns, 10), 3)
    assert.strictEqual(newestThatFit(turns, 11), 4)
  })

  // Random logs with arbitrary interleavings: results may come after later user messages.
  const log = fc.array(
    fc.oneof(
      fc.constant({ kind: "user" as const }),
      fc.constant({ kind: "assistant" as const }),
      fc.constant({ kind: "system" as const }),
      fc.constant({ kind: "summary" as const }),
      fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: "call" as const, n })),
      fc.nat().map((pick) => ({ kind: "result" as const, pick }))
    ),
    { maxLength: 80 }
  ).map((steps) => {
    const out: Array<Message> = []
    const calls: Array<string> = []
    for (const step of steps) {
      const seq = out.length + 1
      if (step.kind === "call") {
        const ids = Array.from({ length: step.n }, (_, i) => `c${seq}_${i}`)
        calls.push(...ids)
        out.push(call(seq, ...ids))
      } else if (step.kind === "result") {
        out.push(result(seq, calls.length === 0 ? `orphan${seq}` : calls[step.pick % calls.length] ?? ""))
      } else {
        out.push(message(seq, step.kind))
      }
    }
    return out
  })

  it.prop("partitions the log, keeps calls with results, and cuts at every other user message", [log], ([messages]) => {
    const { turns } = groupTurns(messages)
    const conversation = messages.filter((m) => m.role !== "summary")
    assert.deepStrictEqual(turns.flatMap((t) => t.messages), conversation)
    const turnOf = new Map<number, number>()
    turns.forEach((t, i) => t.messages.forEach((m) => turnOf.set(m.seq, i)))
    const callSeq = new Map<string, number>()
    for (const m of conversation) {
      for (const c of m.metadata.toolCalls ?? []) callSeq.set(c.id, m.seq)
      const answered = m.metadata.toolCallId === undefined ? undefined : callSeq.get(m.metadata.toolCallId)
      if (answered !== undefined) assert.strictEqual(turnOf.get(answered), turnOf.get(m.seq))
    }
    turns.forEach((t, i) => {
      if (i > 0) assert.strictEqual(t.messages[0]?.role, "user")
      // A user message inside a turn is there only because a call before it is answered after it.
      t.messages.slice(1).forEach((m) => {
        if (m.role !== "user") return
        const spanned = conversation.some((r) => {
          const c = r.metadata.toolCallId === undefined ? undefined : callSeq.get(r.metadata.toolCallId)
          return c !== undefined && c < m.seq && r.seq > m.seq
        })
        assert.isTrue(spanned, `user message ${m.seq} should start a turn`)
      })
      assert.strictEqual(t.tokenCount, t.messages.length)
    })
  })

  it.prop(
    "the complete turns of any suffix are the newest turns of the whole log",
    [log, fc.nat()],
    ([messages, cut]) => {
      const start = messages.length === 0 ? 0 : cut % messages.length
      const whole = seqs(groupTurns(messages).turns)
      const partial = groupTurns(messages.slice(start), { partial: start > 0 })
      const complete = seqs(partial.firstTurnComplete ? partial.turns : partial.turns.slice(1))
      assert.deepStrictEqual(complete, whole.slice(whole.length - complete.length))
    }
  )
})

describe("loadRecentTurns", () => {
  it.effect("never returns a turn cut by a page boundary", () =>
    Effect.gen(function*() {
      const repository = yield* RepositoryService
      const conversationId = freshId()
      // One turn of 1 + 2 * 70 + 1 messages (longer than the first page), then a small one.
      const calls = Array.from({ length: 70 }, (_, i) => `call_${i}`)
      yield* repository.appendMessages(conversationId, [
        newMessage("user", "start", {}, 1),
        ...calls.flatMap((callId) => [
          newMessage("assistant", "", { toolCalls: [{ id: callId, name: "t", params: null }] }, 1),
          newMessage("tool", "ok", { toolCallId: callId, toolName: "t" }, 1)
        ]),
        newMessage("assistant", "done", {}, 1),
        newMessage("user", "next", {}, 1),
        newMessage("assistant", "ok", {}, 1)
      ])
      // With room for 70 tokens the big turn (142) cannot fit, and no part of it may be offered.
      // A window read of one small page forces the further, doubling pages.
      const window = yield* repository.readWindow(conversationId, { after: "system-prefix", tokenLimit: 1 })
      const page = { ...window, recent: window.recent.slice(-3), reachedStart: false }
      const some = yield* loadRecentTurns(repository, page, 70)
      const shown = some.turns.slice(some.turns.length - newestThatFit(some.turns, 70))
      assert.deepStrictEqual(shown.map((t) => t.messages.length), [2])
      const all = yield* loadRecentTurns(repository, page, 1000)
      assert.isTrue(all.reachedStart)
      assert.deepStrictEqual(all.turns.map((t) => t.messages.length), [142, 2])
    }).pipe(Effect.provide(MemoryStore.layer)))
})
