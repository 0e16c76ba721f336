/**
 * Work read from a conversation before it was erased never lands in the conversation written again
 * under its id. Two memories share one store, as two processes do: the first holds a summarization
 * and an extraction of user facts in flight, the second erases the user, and the user writes the
 * same conversation id again. On the in-memory store, PGlite and PostgreSQL.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { type Context, Deferred, Effect, Layer, Redacted, type Scope } from "effect"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import type * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import { UserMemoryService } from "../src/services/UserMemoryService.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { freshUser } from "./contracts/UserStoreContract.js"
import { freshId } from "./fixtures/messages.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

/** The offline skill, each call held at `gate` once `entered` says it started. */
const heldSkill = (entered: Deferred.Deferred<boolean>, gate: Deferred.Deferred<boolean>) =>
  Layer.effect(
    SkillService,
    Effect.map(SkillService, (skill) => {
      const held = Effect.zipRight(Deferred.succeed(entered, true), Deferred.await(gate))
      return SkillService.of({
        summarize: (input) => Effect.zipRight(held, skill.summarize(input)),
        extractFacts: (input) => Effect.zipRight(held, skill.extractFacts(input))
      })
    })
  ).pipe(Layer.provide(ExtractiveSkill.layer), Layer.provide(ApproximateTokenCounter.layer))

/** A memory over the shared store: its own strategy and jobs, as another process has. */
const memoryOver = (store: Context.Context<Store.Ports>, skill: Layer.Layer<SkillService>) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(
      SummarizationStrategy.layer({
        tokenBudget: 400,
        summaryTokenCap: 100,
        kRawTurns: 1,
        chunkSummarizeThreshold: 200
      })
    ),
    Layer.provideMerge(skill),
    Layer.provideMerge(ApproximateTokenCounter.layer),
    Layer.provideMerge(Layer.succeedContext(store))
  )

const secrets = [
  { role: "user" as const, content: "My passport number is XP-998877 and my order is ORD-4242." },
  { role: "assistant" as const, content: "Noted: passport XP-998877, order ORD-4242." },
  ...Array.from({ length: 6 }, (_, i) => [
    { role: "user" as const, content: `Secret note ${i}: the locker code is LK-${7100 + i}.` },
    { role: "assistant" as const, content: `Locker code LK-${7100 + i} noted.` }
  ]).flat()
]

const scenario = <E>(store: Effect.Effect<Context.Context<Store.Ports>, E, Scope.Scope>) =>
  Effect.gen(function*() {
    const ports = yield* store
    const [entered, gate] = [yield* Deferred.make<boolean>(), yield* Deferred.make<boolean>()]
    const first = yield* Layer.build(memoryOver(ports, heldSkill(entered, gate)))
    const second = yield* Layer.build(
      memoryOver(ports, ExtractiveSkill.layer.pipe(Layer.provide(ApproximateTokenCounter.layer)))
    )
    const [user, id] = [freshUser("ana"), freshId("support")]

    // The first memory's jobs read the conversation and hold in the skill.
    yield* Effect.provide(Effect.flatMap(ChatMemoryService, (m) => m.addMessages(id, secrets, { userId: user })), first)
    yield* Deferred.await(entered)
    // The second erases the user, who then writes the same conversation id again.
    yield* Effect.provide(Effect.flatMap(UserMemoryService, (u) => u.erase(user)), second)
    // One message, not answered yet: its facts cursor and summary state are where the erased ones started.
    const again = [{ role: "user" as const, content: "Hello again, what can you do?" }]
    yield* Effect.provide(Effect.flatMap(ChatMemoryService, (m) => m.addMessages(id, again, { userId: user })), second)
    yield* Effect.provide(Effect.flatMap(ChatMemoryService, (m) => m.awaitIdle()), second)

    // The held jobs finish: what they read is gone, and none of it comes back.
    yield* Deferred.succeed(gate, true)
    yield* Effect.provide(Effect.flatMap(ChatMemoryService, (m) => m.awaitIdle()), first)
    const facts = yield* Effect.provide(Effect.flatMap(UserMemoryService, (u) => u.getFacts(user)), second)
    const context = yield* Effect.provide(
      Effect.flatMap(ChatMemoryService, (m) => m.getContext(id, { userId: user })),
      second
    )
    const fresh = yield* Effect.provide(
      Effect.flatMap(ChatMemoryService, (m) => m.getContext(freshId("new"), { userId: user })),
      second
    )
    const messages = yield* Effect.provide(Effect.flatMap(ChatMemoryService, (m) => m.getMessages(id)), second)
    const seen = JSON.stringify([facts, context, fresh, messages])
    for (const secret of ["XP-998877", "ORD-4242", "LK-71"]) assert.notInclude(seen, secret)
    assert.include(JSON.stringify(context), "Hello again")
  })

describe("a conversation written again after an erasure", () => {
  it.scoped("in memory: the jobs in flight of another memory land nothing of what was erased", () =>
    scenario(Layer.build(MemoryStore.layer)))

  it.scoped("on PGlite: the jobs in flight of another memory land nothing of what was erased", () =>
    scenario(Layer.build(pgliteRepository())))
})

describePostgres("a conversation written again after an erasure, on PostgreSQL", (base) => {
  it.scoped("two instances: the jobs in flight of one land nothing of what the other erased", () =>
    scenario(
      Effect.flatMap(freshSchemaUrl(base), (url) =>
        Layer.build(SqlStore.layer().pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))))
    ))
})
