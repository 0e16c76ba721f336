/**
 * The contract of a message's time (`createdAt`): the time a caller gives round trips through the
 * store to the millisecond, in whatever order the times come (the seq, not the time, orders the
 * log); the conversation starts at its first message's time; and the service stores what the
 * caller gave, and the time of the write for a message without one.
 */
import { assert, type Vitest } from "@effect/vitest"
import { DateTime, Effect, Layer, TestClock } from "effect"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import type * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../../src/services/ChatMemoryService.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import * as NoopStrategy from "../../src/strategies/NoopStrategy.js"
import { freshId, newMessage } from "../fixtures/messages.js"

/**
 * Times a caller may give, out of order on purpose: with milliseconds, at the edges of the years
 * a store holds, before 1970, and one given with an offset.
 */
const times = [
  "2026-03-14T09:12:00.123Z",
  "2026-03-13T23:59:59.999Z",
  "1969-07-20T20:17:40.000Z",
  "1000-01-01T00:00:00.000Z",
  "9999-12-31T23:59:59.999Z",
  "2026-03-16T18:40:00.001Z"
]

/** The service over the store's ports: the no-op strategy, approximate token counts. */
const ServiceOverPorts = ChatMemory.layer.pipe(
  Layer.provideMerge(NoopStrategy.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)

const iso = (time: DateTime.Utc): string => DateTime.formatIso(time)

/** Registers the contract of message times in a suite whose layer provides a store. */
export const createdAtContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("a caller's createdAt round trips to the millisecond, in any order; the conversation starts at the first", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId()
      const appended = yield* repo.appendMessages(
        id,
        times.map((time, i) => ({
          ...newMessage(i % 2 === 0 ? "user" : "assistant", `message ${i}`),
          createdAt: DateTime.unsafeMake(time)
        }))
      )
      assert.deepStrictEqual(appended.messages.map((m) => iso(m.createdAt)), times)
      const stored = yield* repo.listMessages(id, {})
      assert.deepStrictEqual(stored.map((m) => [m.seq, iso(m.createdAt)]), times.map((time, i) => [i + 1, time]))
      const window = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 10_000 })
      assert.deepStrictEqual(window.recent.map((m) => iso(m.createdAt)), times)
      const info = yield* repo.getConversation(id)
      assert.strictEqual(iso(info.createdAt), times[0])
      // A later append does not move the start.
      yield* repo.appendMessages(id, [{
        ...newMessage("user", "later"),
        createdAt: DateTime.unsafeMake(times[2] ?? "")
      }])
      assert.strictEqual(iso((yield* repo.getConversation(id)).createdAt), times[0])
    }))

  it.effect("addMessages stores the caller's createdAt, and the time of the write for a message without one", () =>
    Effect.gen(function*() {
      const write = "2030-01-01T00:00:00.000Z"
      yield* TestClock.setTime(Date.parse(write))
      const memory = yield* ChatMemoryService
      const id = freshId()
      const added = yield* memory.addMessages(id, [
        { role: "user", content: "Where is ORD-1?", createdAt: "2026-03-14T09:12:00.123Z" },
        // An offset, and a fraction finer than a store keeps: to the millisecond, in UTC.
        { role: "assistant", content: "Shipped.", createdAt: "2026-03-14T10:12:00.4567+01:00" },
        { role: "user", content: "And ORD-2?" },
        // Earlier than the message before it: accepted, after it in the log.
        { role: "assistant", content: "Pending.", createdAt: "2026-03-13T08:00:00Z" }
      ])
      const expected = [
        "2026-03-14T09:12:00.123Z",
        "2026-03-14T09:12:00.456Z",
        write,
        "2026-03-13T08:00:00.000Z"
      ]
      assert.deepStrictEqual(added.map((m) => iso(m.createdAt)), expected)
      const read = yield* memory.getMessages(id)
      assert.deepStrictEqual(read.map((m) => [m.seq, iso(m.createdAt)]), expected.map((time, i) => [i + 1, time]))
    }).pipe(Effect.provide(ServiceOverPorts)))
}
