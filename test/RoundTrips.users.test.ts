/**
 * Statements per context on the SQL stores, with users: a context with a query, of a user's
 * conversation, of a new conversation of the user, and of a conversation without a user, takes at
 * most three round trips (PGlite, and PostgreSQL when DATABASE_URL is set).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type Counter, counting } from "../bench/roundTrips.js"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as UserId from "../src/domain/UserId.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { clientLayer, describePostgres } from "./fixtures/postgres.js"

const counter: Counter = { value: 0, fiber: undefined }

const memoryOver = (client: Parameters<ReturnType<typeof counting>>[0], lock: "process" | "lease") =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(SummarizationStrategy.layer({ tokenBudget: 2000 })),
    Layer.provideMerge(ScriptedSkill.layer()),
    Layer.provideMerge(SqlStore.layer({ lock }).pipe(Layer.provide(counting(counter)(client)))),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const user = UserId.UserId.make("round-trips-user")
const earlier = ConversationId.make("round-trips-earlier")
const current = ConversationId.make("round-trips-current")
const fresh = ConversationId.make("round-trips-fresh")
const plain = ConversationId.make("round-trips-plain")

/** The statements `self` sends, counted on the calling fiber alone. */
const statements = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    counter.fiber = yield* Effect.fiberId
    const before = counter.value
    yield* self
    const sent = counter.value - before
    counter.fiber = undefined
    return sent
  })

const suite = (name: string, memory: Layer.Layer<ChatMemoryService, unknown>) =>
  layer(memory, { timeout: "60 seconds" })(name, (it) => {
    it.effect("a context with a query takes at most three round trips, with a user or without", () =>
      Effect.gen(function*() {
        const service = yield* ChatMemoryService
        for (const [id, userId] of [[earlier, user], [current, user], [plain, undefined]] as const) {
          for (let i = 0; i < 6; i++) {
            yield* service.addMessages(id, [
              { role: "user", content: `Order ORD-${i} for ${id}: the boiler valve, due on day ${i}.` },
              { role: "assistant", content: `Noted: order ORD-${i}, the boiler valve.` }
            ], { userId })
          }
          yield* service.awaitIdle(id)
        }
        const query = "when is order ORD-2 due?"
        const counts = {
          existing: yield* statements(service.getContext(current, { userId: user, query })),
          fresh: yield* statements(service.getContext(fresh, { userId: user, query })),
          freshWithoutQuery: yield* statements(service.getContext(fresh, { userId: user })),
          plain: yield* statements(service.getContext(plain, { query }))
        }
        for (const [call, count] of Object.entries(counts)) {
          assert.isAtLeast(count, 1, call)
          assert.isAtMost(count, 3, call)
        }
        // The new conversation's sections come with its window read: one statement without a query.
        assert.strictEqual(counts.freshWithoutQuery, 1)
      }))
  })

describe("round trips per context, with users", () => {
  suite("PGlite", memoryOver(pgliteClient(), "process"))
})

describePostgres("round trips per context, with users (PostgreSQL)", (url) => {
  suite("PostgreSQL", memoryOver(clientLayer(url), "lease"))
})
