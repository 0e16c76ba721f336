/**
 * The contract of the summarization lease (`SummarizationLease`): one holder per conversation,
 * released on failure and on interruption, held while its holder waits (the log stays writable),
 * and usable on a conversation not stored yet.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import * as Store from "../../src/layers/store/Store.js"
import { freshId, newMessage } from "../fixtures/messages.js"

/** Registers the lease's contract in a suite whose layer provides a store. */
export const summarizationLeaseContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("the summarization lease admits one holder per conversation and is released on failure", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      const other = freshId()
      yield* store.repository.appendMessages(id, [newMessage("user", "u")])
      yield* store.repository.appendMessages(other, [newMessage("user", "u")])
      const nested = yield* store.lease.withLease(
        id,
        Effect.all([
          store.lease.withLease(id, Effect.succeed("inner")),
          store.lease.withLease(other, Effect.succeed("other"))
        ])
      )
      assert.deepStrictEqual(nested, Option.some([Option.none(), Option.some("other")]))
      const failed = yield* Effect.exit(store.lease.withLease(id, Effect.fail("boom")))
      assert.isTrue(Exit.isFailure(failed))
      assert.deepStrictEqual(yield* store.lease.withLease(id, Effect.succeed(1)), Option.some(1))
    }))

  it.effect("the summarization lease is held while its holder waits, and released when it is interrupted", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(id, [newMessage("user", "u")])
      const holding = yield* Deferred.make<undefined>()
      // A holder waiting for its model: held until interrupted.
      const holder = yield* Effect.fork(
        store.lease.withLease(id, Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never))
      )
      yield* Deferred.await(holding)
      assert.deepStrictEqual(yield* store.lease.withLease(id, Effect.succeed("while held")), Option.none())
      // Writes and reads of the conversation go on meanwhile.
      const appended = yield* store.repository.appendMessages(id, [newMessage("assistant", "a")])
      assert.deepStrictEqual(appended.messages.map((m) => m.seq), [2])
      yield* Fiber.interrupt(holder)
      assert.deepStrictEqual(yield* store.lease.withLease(id, Effect.succeed("after")), Option.some("after"))
    }))

  it.effect("the summarization lease of a conversation not stored yet runs its effect", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      assert.deepStrictEqual(yield* store.lease.withLease(id, Effect.succeed("ran")), Option.some("ran"))
      // Taking the lease does not create the conversation.
      assert.strictEqual((yield* Effect.flip(store.repository.getConversation(id)))._tag, "ConversationNotFoundError")
    }))
}
