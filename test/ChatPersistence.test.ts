/**
 * `ChatPersistence.layer`: an app written against `@effect/ai`'s `Chat.Persistence`, unchanged
 * (`getOrCreate`, then `generateText` with its toolkit, called again while the model calls tools),
 * runs 40 turns over the memory, against the real OpenAI client and the local fake server, over
 * every store: the prompt within the budget at every call, every message stored once, a fact of
 * turn 3 recalled at turn 40; two requests on one chat at once, in one process and in two sharing
 * the store, lose and duplicate nothing. A turn continued by its own chat while another request's
 * steps interleave, or by a fresh chat, from the log, whole. Input refused before the model is
 * called, files left out. Then `streamText` (also stopped at its finish part), `generateObject`,
 * `save`, clearing, `get` and the time to live.
 */
import { Chat, type LanguageModel, Prompt, Tool, Toolkit } from "@effect/ai"
import { PersistenceBackingError } from "@effect/experimental/Persistence"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  Redacted,
  Ref,
  Schema,
  type Scope,
  Stream
} from "effect"
import { recalledHeading } from "../src/domain/internal/recall.js"
import type { AnyInput } from "../src/domain/Message.js"
import { DataValidationError } from "../src/errors/DataValidationError.js"
import { RepositoryError } from "../src/errors/RepositoryError.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as ChatPersistence from "../src/layers/ChatPersistence.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"
import { agentModel } from "./fixtures/weather.js"

// -------------------------------------------------------------------------------------------------
// The app: nothing in it knows about the memory.
// -------------------------------------------------------------------------------------------------

const Note = Tool.make("note", {
  description: "Keeps a note of what the user said.",
  parameters: { text: Schema.String },
  success: Schema.Struct({ saved: Schema.Boolean })
})

const Notes = Toolkit.make(Note)

const NotesLive = Notes.toLayer({ note: () => Effect.succeed({ saved: true }) })

/**
 * One request of the app: the chat, the user's line, the tool loop until the model answers.
 * `between` is the app's own work between two steps (a UI update, a log line).
 */
const app = (chatId: string, line: string, between: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    const persistence = yield* Chat.Persistence
    const chat = yield* persistence.getOrCreate(chatId)
    let response = yield* chat.generateText({ prompt: line, toolkit: Notes })
    while (response.toolCalls.length > 0) {
      yield* between
      response = yield* chat.generateText({ prompt: [], toolkit: Notes })
    }
    return { text: response.text, history: yield* Ref.get(chat.history) }
  })

/** One request of an app that asks without tools. */
const ask = (chatId: string, said: string) =>
  Effect.gen(function*() {
    const persistence = yield* Chat.Persistence
    const chat = yield* persistence.getOrCreate(chatId)
    return yield* chat.generateText({ prompt: said })
  })

// -------------------------------------------------------------------------------------------------
// The model: the fake server, answering by what it is sent.
// -------------------------------------------------------------------------------------------------

const ToolsOf = Schema.parseJson(Schema.Struct({ tools: Schema.optional(Schema.Array(Schema.Unknown)) }))

const offersTools = (request: Fake.RecordedRequest): boolean =>
  Option.match(Schema.decodeUnknownOption(ToolsOf)(request.rawBody), {
    onNone: () => false,
    onSome: (body) => (body.tools?.length ?? 0) > 0
  })

/**
 * With tools and a user message last: a call of `note` with the user's line. Otherwise the answer,
 * `Noted: <the last user message>` (structured output: `{ topic }`).
 */
const model: Fake.Script = (request, n) => {
  const said = Fake.userTexts(request).at(-1) ?? ""
  if (Fake.isStructured(request)) return Fake.object({ topic: said })(request, n)
  const last = Fake.inputItems(request).at(-1)
  return last !== undefined && "role" in last && last.role === "user" && offersTools(request)
    ? Fake.functionCall("note", { text: said }, `call_${n}`)(request, n)
    : Fake.text(`Noted: ${said}`)(request, n)
}

// -------------------------------------------------------------------------------------------------
// The memory and its stores.
// -------------------------------------------------------------------------------------------------

const budget = 400

const memoryOptions = {
  tokenBudget: budget,
  kRawTurns: 2,
  summaryTokenCap: 60,
  recallTokenBudget: 0.35
} as const

/**
 * A store that several instances of the memory share, as processes share a database: each call of
 * `instance` is a store layer of its own over the same data.
 */
type SharedStore = Effect.Effect<Layer.Layer<Store.Ports, unknown>, unknown, Scope.Scope>

const sharedMemory: SharedStore = Effect.gen(function*() {
  const ports = yield* Effect.flatMap(Layer.build(MemoryStore.layer), (context) => Effect.provide(Store.get, context))
  return Store.layerFrom(ports)
})

const sharedPglite: SharedStore = Effect.gen(function*() {
  const client = yield* Effect.map(Layer.build(pgliteClient()), Context.get(SqlClient.SqlClient))
  return SqlStore.layer({ lock: "process" }).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, client)))
})

/** A schema of its own; each instance with a pool of its own. */
const sharedPostgres = (base: string): SharedStore =>
  Effect.map(
    freshSchemaUrl(base),
    (url) => SqlStore.layer().pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 3 })))
  )

/** One instance of the app's process: the memory over `store`, and its `Chat.Persistence`. */
const instance = (store: Layer.Layer<Store.Ports, unknown>) =>
  ChatPersistence.layer().pipe(Layer.provideMerge(ChatMemoryTest.layer({ ...memoryOptions, store })))

// -------------------------------------------------------------------------------------------------
// Reading the requests.
// -------------------------------------------------------------------------------------------------

const tokens = (text: string) => Math.ceil(text.length / 4) + 4

/**
 * Tokens of a request's input as the memory counts messages (a quarter of a token per character,
 * plus 4 a message), up to the turn's user message (the last one): what the memory gave.
 */
const contextTokens = (request: Fake.RecordedRequest): number => {
  const items = Fake.inputItems(request)
  const turnStart = items.map((item) => "role" in item && item.role === "user").lastIndexOf(true)
  return items.slice(0, turnStart).reduce((sum, item) => {
    if ("role" in item) {
      const text = typeof item.content === "string"
        ? item.content
        : item.content.map((part) => part.text ?? "").join("")
      return sum + tokens(text)
    }
    return sum + (item.type === "function_call"
      ? tokens(JSON.stringify([{ id: item.call_id, name: item.name, params: JSON.parse(item.arguments) }]))
      : tokens(item.output))
  }, 0)
}

/** Tokens of a prompt, counted alike. */
const promptTokens = (prompt: Prompt.Prompt): number =>
  prompt.content.reduce((sum, message) => {
    if (message.role === "system") return sum + tokens(message.content)
    return sum + tokens(
      message.content.map((part) =>
        part.type === "text"
          ? part.text
          : part.type === "tool-call"
          ? JSON.stringify([{ id: part.id, name: part.name, params: part.params }])
          : part.type === "tool-result"
          ? JSON.stringify(part.result)
          : ""
      ).join("")
    )
  }, 0)

/** Whether the last item of the request is a user message (the first call of a turn). */
const endsWithUser = (request: Fake.RecordedRequest): boolean => {
  const last = Fake.inputItems(request).at(-1)
  return last !== undefined && "role" in last && last.role === "user"
}

/** The recalled block of a request, if any. */
const recalledBlock = (request: Fake.RecordedRequest): string | undefined =>
  Fake.userTexts(request).find((text) => text.startsWith(recalledHeading([])))

/** The stored log, as `[role, content, tool call params]` (summary messages aside). */
const storedLog = (chatId: string) =>
  Effect.map(
    Effect.flatMap(ChatMemoryService, (memory) => memory.getMessages(chatId)),
    (messages) =>
      messages.filter((message) => message.role !== "summary").map((message) => [
        message.role,
        message.content,
        (message.metadata.toolCalls ?? []).map((call) => JSON.stringify(call.params)).join(",")
      ])
  )

/** The log a turn stores: the line, the call of `note`, its result, the answer. */
const turnLog = (line: string) => [
  ["user", line, ""],
  ["assistant", "", JSON.stringify({ text: line })],
  ["tool", JSON.stringify({ saved: true }), ""],
  ["assistant", `Noted: ${line}`, ""]
]

const topics = [
  "sailing knots",
  "bread baking",
  "the moons of Jupiter",
  "learning the cello",
  "alpine flowers",
  "chess openings",
  "tide pools",
  "old maps",
  "bee keeping",
  "paper folding"
]

/** Turn `i` of 40 (from 1): turn 3 says the locker code, turn 40 asks for it. */
const line = (i: number): string =>
  i === 3
    ? "Please remember: my locker code is ZEBRA-7741."
    : i === 40
    ? "What was my locker code again?"
    : `Turn ${i}: tell me one thing about ${topics[i % topics.length]}.`

// -------------------------------------------------------------------------------------------------

const storeSuite = (name: string, shared: () => SharedStore) =>
  describe(`ChatPersistence over ${name}`, () => {
    it.scoped("40 turns of an unchanged Chat app: within the budget, stored once, turn 3 recalled at 40", () =>
      Effect.gen(function*() {
        const world = yield* Layer.build(
          instance(yield* shared()).pipe(Layer.provideMerge(NotesLive), Layer.provideMerge(agentModel(model)))
        )
        yield* Effect.gen(function*() {
          const fake = yield* Fake.FakeOpenAi
          const memory = yield* ChatMemoryService
          const lines = Array.from({ length: 40 }, (_, i) =>
            line(i + 1))
          for (const said of lines) {
            const turn = yield* app("trip", said)
            assert.strictEqual(turn.text, `Noted: ${said}`)
            // The chat holds the memory's view, never the whole conversation.
            assert.isAtMost(promptTokens(turn.history), budget)
            // Background summaries land at any time in an app; here, before the next turn.
            yield* memory.awaitIdle("trip")
          }

          const requests = yield* fake.requests
          assert.strictEqual(requests.length, 80)
          for (const [i, request] of requests.entries()) {
            // The first call of a turn ends with the user's new message, the second continues it.
            assert.strictEqual(endsWithUser(request), i % 2 === 0, `request ${i + 1}`)
            assert.isAtMost(contextTokens(request), budget, `request ${i + 1}`)
          }
          // Every message once, in the order it was said.
          assert.deepStrictEqual(yield* storedLog("trip"), lines.flatMap(turnLog))

          // Turn 3 is not among the recent turns at turn 40, but its fact is recalled for the question,
          // in both calls of the turn, before the turn's question.
          const last = requests.slice(-2)
          for (const request of last) {
            assert.include(recalledBlock(request), "ZEBRA-7741")
            assert.notInclude(Fake.userTexts(request).filter((text) => text !== recalledBlock(request)), line(3))
            assert.strictEqual(Fake.userTexts(request).at(-1), line(40))
          }
        }).pipe(Effect.provide(world))
      }), { timeout: 120_000 })

    it.scoped("two requests on one chat at once, in one process: serialized, nothing lost or duplicated", () =>
      Effect.gen(function*() {
        const world = yield* Layer.build(instance(yield* shared()).pipe(Layer.provideMerge(agentModel(model))))
        yield* Effect.gen(function*() {
          const fake = yield* Fake.FakeOpenAi
          // Two requests of the app, each with its chat, as two HTTP requests would have.
          yield* Effect.all([ask("shared", "First question"), ask("shared", "Second question")], {
            concurrency: "unbounded"
          })

          const log = yield* storedLog("shared")
          const [a, b] = [log[0]?.[1] ?? "", log[2]?.[1] ?? ""]
          assert.sameMembers([a, b], ["First question", "Second question"])
          assert.deepStrictEqual(log, [
            ["user", a, ""],
            ["assistant", `Noted: ${a}`, ""],
            ["user", b, ""],
            ["assistant", `Noted: ${b}`, ""]
          ])
          // The later call saw the earlier exchange.
          const later = (yield* fake.requests)[1]
          assert.include(later?.rawBody, `Noted: ${a}`)
        }).pipe(Effect.provide(world))
      }), { timeout: 60_000 })

    it.scoped("two requests on one chat at once, in two processes sharing the store: each exchange once, whole", () =>
      Effect.gen(function*() {
        const store = yield* shared()
        const models = yield* Layer.build(agentModel(model))
        const first = yield* Layer.build(instance(store))
        const second = yield* Layer.build(instance(store))
        yield* Effect.all([
          ask("shared", "From the first process").pipe(Effect.provide(first), Effect.provide(models)),
          ask("shared", "From the second process").pipe(Effect.provide(second), Effect.provide(models))
        ], { concurrency: "unbounded" })

        const log = yield* Effect.provide(storedLog("shared"), first)
        const [a, b] = [log[0]?.[1] ?? "", log[2]?.[1] ?? ""]
        assert.sameMembers([a, b], ["From the first process", "From the second process"])
        assert.deepStrictEqual(log, [
          ["user", a, ""],
          ["assistant", `Noted: ${a}`, ""],
          ["user", b, ""],
          ["assistant", `Noted: ${b}`, ""]
        ])
      }), { timeout: 60_000 })
  })

storeSuite("the in-memory store", () => sharedMemory)
storeSuite("PGlite", () => sharedPglite)
describePostgres("ChatPersistence over PostgreSQL", (url) => storeSuite("PostgreSQL", () => sharedPostgres(url)))

// -------------------------------------------------------------------------------------------------

const world = Effect.gen(function*() {
  return yield* Layer.build(
    instance(yield* sharedMemory).pipe(Layer.provideMerge(NotesLive), Layer.provideMerge(agentModel(model)))
  )
})

describe("ChatPersistence: the rest of Chat", () => {
  it.scoped("streamText: the parts as they come, the exchange stored when the stream ends", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const fake = yield* Fake.FakeOpenAi
        const chat = yield* persistence.getOrCreate("streamed")
        yield* app("streamed", "My cat is called Miso.")
        const parts = yield* Stream.runCollect(chat.streamText({ prompt: "What is my cat called?" }))
        const text = [...parts].flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")
        assert.strictEqual(text, "Noted: What is my cat called?")
        assert.deepStrictEqual((yield* storedLog("streamed")).slice(4), [
          ["user", "What is my cat called?", ""],
          ["assistant", "Noted: What is my cat called?", ""]
        ])
        // The streamed call was sent the memory's context, then the question.
        const request = (yield* fake.requests).at(-1)
        assert.strictEqual(request?.body.stream, true)
        assert.deepStrictEqual(Fake.userTexts(request ?? { ...emptyRequest }).slice(-2), [
          "My cat is called Miso.",
          "What is my cat called?"
        ])
        assert.deepStrictEqual(
          (yield* Ref.get(chat.history)).content.map((message) => message.role),
          ["user", "assistant", "tool", "assistant", "user", "assistant"]
        )
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("generateObject: the object, and the exchange stored", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const chat = yield* persistence.getOrCreate("object")
        const response = yield* chat.generateObject({
          prompt: "Sailing, mostly.",
          schema: Schema.Struct({ topic: Schema.String })
        })
        assert.deepStrictEqual(response.value, { topic: "Sailing, mostly." })
        assert.deepStrictEqual(yield* storedLog("object"), [
          ["user", "Sailing, mostly.", ""],
          ["assistant", JSON.stringify({ topic: "Sailing, mostly." }), ""]
        ])
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("save stores what the app appended; an emptied history, saved, clears the chat", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const chat = yield* persistence.getOrCreate("edited")
        yield* Ref.update(chat.history, Prompt.merge([{ role: "assistant", content: "Welcome back!" }]))
        yield* chat.save
        assert.deepStrictEqual(yield* storedLog("edited"), [["assistant", "Welcome back!", ""]])
        // Saved again with nothing new: nothing stored twice.
        yield* chat.save
        assert.strictEqual((yield* storedLog("edited")).length, 1)

        // An appended message not saved goes with the next call's exchange.
        yield* Ref.update(chat.history, Prompt.merge([{ role: "user", content: "Hello!" }]))
        yield* chat.generateText({ prompt: "Anyone there?" })
        assert.deepStrictEqual(yield* storedLog("edited"), [
          ["assistant", "Welcome back!", ""],
          ["user", "Hello!", ""],
          ["user", "Anyone there?", ""],
          ["assistant", "Noted: Anyone there?", ""]
        ])

        // A history rewritten is refused by save, naming it; the log is as it was.
        yield* Ref.set(chat.history, Prompt.make([{ role: "user", content: "Something else" }]))
        const refused = yield* Effect.flip(chat.save)
        assert.strictEqual(refused._tag, "PersistenceError")
        assert.include(causeMessage(refused), "Chat.save: invalid history: was changed, not appended to")
        assert.strictEqual((yield* storedLog("edited")).length, 4)

        // The Chat way to start over: an empty history, saved.
        yield* Ref.set(chat.history, Prompt.empty)
        yield* chat.save
        const missing = yield* Effect.flip(persistence.get("edited"))
        assert.strictEqual(missing._tag, "ChatNotFoundError")
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("get: a chat never written is not found; one written comes back with its context", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const missing = yield* Effect.flip(persistence.get("nobody"))
        assert.strictEqual(missing._tag, "ChatNotFoundError")
        yield* app("somebody", "Hi there.")
        const chat = yield* persistence.get("somebody")
        assert.strictEqual(chat.id, "somebody")
        assert.deepStrictEqual(
          (yield* Ref.get(chat.history)).content.map((message) => message.role),
          ["user", "assistant", "tool", "assistant"]
        )
        assert.include(yield* chat.exportJson, "Hi there.")
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a time to live is refused with an error that says so; none, or an infinite one, is taken", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const refused = yield* Effect.flip(persistence.getOrCreate("ttl", { timeToLive: "1 hour" }))
        assert.strictEqual(refused._tag, "PersistenceError")
        assert.instanceOf(refused, PersistenceBackingError)
        assert.strictEqual(refused instanceof PersistenceBackingError && refused.method, "Chat.Persistence.getOrCreate")
        assert.include(
          causeMessage(refused),
          "Chat.Persistence.getOrCreate: invalid options.timeToLive: is not supported by the memory's Chat.Persistence"
        )
        yield* persistence.getOrCreate("ttl", { timeToLive: Duration.infinity })
        yield* persistence.getOrCreate("ttl")
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a bad chat id is refused by getOrCreate, as a backing error naming it", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const refused = yield* Effect.flip(persistence.getOrCreate(""))
        assert.strictEqual(refused._tag, "PersistenceError")
        assert.include(causeMessage(refused), "invalid conversationId")
      }).pipe(Effect.provide(yield* world))
    }))
})

/** A turn whose tool loop another request takes up, with a chat of its own: the model's answer. */
const handedOver = (chatId: string, said: string) =>
  Effect.gen(function*() {
    const persistence = yield* Chat.Persistence
    const first = yield* (yield* persistence.getOrCreate(chatId)).generateText({ prompt: said, toolkit: Notes })
    assert.strictEqual(first.toolCalls.length, 1)
    const next = yield* (yield* persistence.getOrCreate(chatId)).generateText({ prompt: [], toolkit: Notes })
    return next.text
  })

/** The tool calls a request sends back, by call id. */
const callIds = (request: Fake.RecordedRequest): ReadonlyArray<string> =>
  Fake.inputItems(request).flatMap((item) => "type" in item && item.type === "function_call" ? [item.call_id] : [])

/** A user line over the budget (400) on its own. */
const long = "Please keep my notes on the harbour survey. " +
  "The tide came in early and the boats were moved twice. ".repeat(40)

describe("ChatPersistence: a turn continued", () => {
  it.scoped("two requests with a tool loop on one chat, their steps interleaved: each continues its own turn", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const [aStepped, bStepped, aDone] = yield* Effect.all([
          Effect.makeLatch(),
          Effect.makeLatch(),
          Effect.makeLatch()
        ])
        // A's first step, B's first step, A's second, B's second: each request pauses between its
        // steps, as an app updating its UI does.
        const [a, b] = yield* Effect.all([
          app("both", "Question A", Effect.zipRight(aStepped.open, bStepped.await)).pipe(Effect.zipLeft(aDone.open)),
          Effect.zipRight(aStepped.await, app("both", "Question B", Effect.zipRight(bStepped.open, aDone.await)))
        ], { concurrency: "unbounded" })
        assert.strictEqual(a.text, "Noted: Question A")
        assert.strictEqual(b.text, "Noted: Question B")

        const requests = yield* fake.requests
        assert.strictEqual(requests.length, 4)
        const [, , aNext, bNext] = requests
        // A's second step was sent A's turn: its question, its call and result, nothing of B's.
        assert.strictEqual(Fake.userTexts(aNext ?? emptyRequest).at(-1), "Question A")
        assert.notInclude(aNext?.rawBody, "Question B")
        assert.deepStrictEqual(callIds(aNext ?? emptyRequest), ["call_1"])
        // B's second step was sent B's turn, after what B's first step was sent (A's first step).
        assert.strictEqual(Fake.userTexts(bNext ?? emptyRequest).at(-1), "Question B")
        assert.deepStrictEqual(callIds(bNext ?? emptyRequest), ["call_1", "call_2"])
        assert.notInclude(bNext?.rawBody, "Noted: Question A")

        // Every message once; each answer is stored after what the other request stored meanwhile.
        const [aTurn, bTurn] = [turnLog("Question A"), turnLog("Question B")]
        assert.deepStrictEqual(yield* storedLog("both"), [
          ...aTurn.slice(0, 3),
          ...bTurn.slice(0, 3),
          aTurn[3],
          bTurn[3]
        ])
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a chat that cleared the conversation continues nothing of what it sent before", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const fake = yield* Fake.FakeOpenAi
        const chat = yield* persistence.getOrCreate("restarted")
        const first = yield* chat.generateText({ prompt: "Question A", toolkit: Notes })
        assert.strictEqual(first.toolCalls.length, 1)
        yield* Ref.set(chat.history, Prompt.empty)
        yield* chat.save
        // Written again, by other requests, past the seq this chat's last exchange had.
        yield* ask("restarted", "Question B")
        yield* ask("restarted", "Question C")
        yield* chat.generateText({ prompt: [], toolkit: Notes })
        const request = (yield* fake.requests).at(-1)
        assert.notInclude(request?.rawBody, "Question A")
        assert.strictEqual(Fake.userTexts(request ?? emptyRequest).at(-1), "Question C")
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a chat whose conversation another chat cleared, and others wrote again past its seq, continues nothing of it", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const fake = yield* Fake.FakeOpenAi
        const chat = yield* persistence.getOrCreate("shared")
        const first = yield* chat.generateText({ prompt: "Secret HUNTER2, please note it", toolkit: Notes })
        assert.strictEqual(first.toolCalls.length, 1)
        // Another chat object of the same id clears it; other requests write it again, past the seq.
        const other = yield* persistence.getOrCreate("shared")
        yield* Ref.set(other.history, Prompt.empty)
        yield* other.save
        yield* ask("shared", "Question B")
        yield* ask("shared", "Question C")
        yield* chat.generateText({ prompt: [], toolkit: Notes })
        const request = (yield* fake.requests).at(-1)
        assert.notInclude(request?.rawBody, "HUNTER2")
        assert.notInclude(JSON.stringify(yield* storedLog("shared")), "HUNTER2")
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a chat without a last exchange of its own continues the turn from the log, whole, over the budget too", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const memory = yield* ChatMemoryService
        const short = "Where did the boats go?"
        assert.strictEqual(yield* handedOver("handed", short), `Noted: ${short}`)
        yield* memory.awaitIdle("handed")
        assert.strictEqual(yield* handedOver("handed", long), `Noted: ${long}`)
        // The memory's context leaves the long turn out: it is over the budget on its own.
        const context = yield* memory.getContext("handed", { query: long })
        assert.isFalse(context.recent.some((message) => message.content === long))

        const requests = yield* fake.requests
        assert.strictEqual(requests.length, 4)
        for (const [said, request, call] of [[short, requests[1], "call_1"], [long, requests[3], "call_3"]] as const) {
          // The turn, once: its line, then its call and its result, last.
          const items = Fake.inputItems(request ?? emptyRequest)
          assert.strictEqual(Fake.userTexts(request ?? emptyRequest).filter((text) => text === said).length, 1)
          assert.strictEqual(Fake.userTexts(request ?? emptyRequest).at(-1), said)
          assert.deepStrictEqual(callIds(request ?? emptyRequest).filter((id) => id === call), [call])
          assert.deepStrictEqual(Fake.toolOutputs(request ?? emptyRequest).at(-1)?.callId, call)
          assert.deepStrictEqual(items.at(-1), {
            type: "function_call_output",
            call_id: call,
            output: "{\"saved\":true}"
          })
        }
        // No note counts the turn that is sent as omitted.
        assert.notInclude(requests[3]?.rawBody, "2 earlier turns")
        assert.deepStrictEqual(yield* storedLog("handed"), [...turnLog(short), ...turnLog(long)])
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a turn longer than a page of the log is read back whole", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const memory = yield* ChatMemoryService
        const question = "Note each of these."
        const calls = Array.from({ length: 40 }, (_, i) => `call_${i + 1}`)
        yield* memory.addMessages("paged", [
          { role: "user", content: question },
          ...calls.flatMap((id): ReadonlyArray<AnyInput> => [
            { role: "assistant", content: "", metadata: { toolCalls: [{ id, name: "note", params: { text: id } }] } },
            {
              role: "tool",
              content: JSON.stringify({ saved: true }),
              metadata: { toolCallId: id, toolName: "note", contentFormat: "json" }
            }
          ])
        ])
        const chat = yield* (yield* Chat.Persistence).getOrCreate("paged")
        const response = yield* chat.generateText({ prompt: [], toolkit: Notes })
        assert.strictEqual(response.text, `Noted: ${question}`)
        const request = (yield* fake.requests)[0] ?? emptyRequest
        assert.deepStrictEqual(Fake.userTexts(request), [question])
        assert.deepStrictEqual(callIds(request), calls)
        assert.strictEqual(Fake.toolOutputs(request).length, calls.length)
      }).pipe(Effect.provide(yield* world))
    }))
})

describe("ChatPersistence: the call's input", () => {
  it.scoped("what the memory would refuse is refused before the model is called, naming the field", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const fake = yield* Fake.FakeOpenAi
        const chat = yield* persistence.getOrCreate("refused")
        const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, LanguageModel.LanguageModel>]> = [
          ["generateText", chat.generateText({ prompt: "" })],
          ["generateObject", chat.generateObject({ prompt: "", schema: Schema.Struct({ topic: Schema.String }) })],
          ["streamText", Stream.runDrain(chat.streamText({ prompt: "" }))]
        ]
        for (const [method, call] of calls) {
          assert.strictEqual(
            refusal(yield* Effect.exit(call)),
            `Chat.${method}: invalid prompt[0].content: must not be empty (only an assistant message with tool calls may be)`
          )
        }
        assert.strictEqual((yield* fake.requests).length, 0)
        assert.strictEqual((yield* Effect.flip(persistence.get("refused")))._tag, "ChatNotFoundError")

        // A message the app appended to the history is named by its place there.
        yield* ask("refused", "Hello?")
        const again = yield* persistence.getOrCreate("refused")
        yield* Ref.update(again.history, Prompt.merge([{ role: "user", content: "" }]))
        assert.strictEqual(
          refusal(yield* Effect.exit(again.generateText({ prompt: "Anyone there?" }))),
          "Chat.generateText: invalid history[2].content: must not be empty (only an assistant message with tool " +
            "calls may be)"
        )
        assert.strictEqual((yield* fake.requests).length, 1)
        // The chat goes on.
        yield* Ref.set(again.history, Prompt.empty)
        yield* again.generateText({ prompt: "Anyone there?" })
        assert.strictEqual((yield* storedLog("refused")).length, 2)
      }).pipe(Effect.provide(yield* world))
    }))

  it.scoped("a user message's files go to the model and are left out of the memory: its text is stored", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const fake = yield* Fake.FakeOpenAi
        const chat = yield* persistence.getOrCreate("photos")
        const photo = Prompt.makePart("file", { mediaType: "image/png", data: new Uint8Array([137, 80, 78, 71]) })
        const question = "Is this the boat?"
        let response = yield* chat.generateText({
          prompt: [{ role: "user", content: [{ type: "text", text: question }, photo] }],
          toolkit: Notes
        })
        while (response.toolCalls.length > 0) response = yield* chat.generateText({ prompt: [], toolkit: Notes })
        assert.strictEqual(response.text, `Noted: ${question}`)
        // Both steps of the turn were sent the photo.
        for (const request of yield* fake.requests) assert.include(request.rawBody, "input_image")
        assert.deepStrictEqual(yield* storedLog("photos"), turnLog(question))

        // A message of files alone keeps a note of them, so its turn keeps its user message.
        yield* chat.generateText({ prompt: [{ role: "user", content: [photo] }] })
        assert.include((yield* fake.requests).at(-1)?.rawBody, "input_image")
        assert.deepStrictEqual((yield* storedLog("photos")).slice(4), [
          ["user", "[a file, image/png, not kept]", ""],
          // The fake answers the last text it was sent.
          ["assistant", `Noted: ${question}`, ""]
        ])
      }).pipe(Effect.provide(yield* world))
    }))
})

describe("ChatPersistence: streams stopped early", () => {
  it.scoped("a consumer that stops at the finish part stores the exchange; one that stops before stores nothing", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const chat = yield* persistence.getOrCreate("stopped")
        const parts = yield* Stream.runCollect(
          chat.streamText({ prompt: "First" }).pipe(Stream.takeUntil((part) => part.type === "finish"))
        )
        assert.strictEqual([...parts].at(-1)?.type, "finish")
        const first = [["user", "First", ""], ["assistant", "Noted: First", ""]]
        assert.deepStrictEqual(yield* storedLog("stopped"), first)

        // Stopped at its first text: the answer is not whole, so nothing is stored.
        const head = yield* Stream.runHead(
          chat.streamText({ prompt: "Second" }).pipe(Stream.filter((part) => part.type === "text-delta"))
        )
        assert.isTrue(Option.isSome(head))
        assert.deepStrictEqual(yield* storedLog("stopped"), first)

        // Interrupted before its finish part: nothing stored.
        const reading = yield* Effect.makeLatch()
        const fiber = yield* Effect.fork(Stream.runForEach(
          chat.streamText({ prompt: "Third" }),
          (part) => part.type === "text-delta" ? Effect.zipRight(reading.open, Effect.never) : Effect.void
        ))
        yield* reading.await
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(yield* storedLog("stopped"), first)

        // The chat's calls go on: each stream gave its permit back.
        yield* chat.generateText({ prompt: "Fourth" })
        assert.deepStrictEqual(yield* storedLog("stopped"), [...first, ["user", "Fourth", ""], [
          "assistant",
          "Noted: Fourth",
          ""
        ]])
      }).pipe(Effect.provide(yield* world))
    }))
})

/** The in-memory store, but every append fails, as a lost connection would. */
const FailingAppends: Layer.Layer<Store.Ports> = Store.layer(Effect.map(MemoryStore.make, (inner) => ({
  ...inner,
  repository: RepositoryService.of({
    ...inner.repository,
    appendMessages: (conversationId) =>
      Effect.fail(new RepositoryError({ operation: "appendMessages", conversationId, detail: "on cue" }))
  })
})))

describe("ChatPersistence: a failing store", () => {
  it.scoped("a call whose exchange cannot be stored dies with the memory's typed error: Chat's calls have no store error", () =>
    Effect.gen(function*() {
      const world = yield* Layer.build(instance(FailingAppends).pipe(Layer.provideMerge(agentModel(model))))
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const chat = yield* persistence.getOrCreate("lost")
        const exit = yield* Effect.exit(chat.generateText({ prompt: "Hello?" }))
        const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
        assert.isTrue(Option.isSome(defect))
        const error = Option.getOrUndefined(defect)
        assert.instanceOf(error, RepositoryError)
        assert.strictEqual(
          error instanceof RepositoryError && error.message,
          "Store failure during appendMessages (conversation \"lost\"): on cue"
        )
        // Nothing stored, so the chat is as it was.
        assert.strictEqual((yield* Effect.flip(persistence.get("lost")))._tag, "ChatNotFoundError")
      }).pipe(Effect.provide(world))
    }))
})

describe("ChatPersistence: a failing store, streamed", () => {
  it.scoped("a stream whose exchange cannot be stored dies with the memory's error, also stopped at its finish part", () =>
    Effect.gen(function*() {
      const world = yield* Layer.build(instance(FailingAppends).pipe(Layer.provideMerge(agentModel(model))))
      yield* Effect.gen(function*() {
        const persistence = yield* Chat.Persistence
        const chat = yield* persistence.getOrCreate("lost")
        // Stopped at the finish part, then read whole: the second call ran, so the first freed the chat.
        for (const stop of [true, false]) {
          const stream = chat.streamText({ prompt: "Hello?" })
          const exit = yield* Effect.exit(
            Stream.runCollect(stop ? stream.pipe(Stream.takeUntil((part) => part.type === "finish")) : stream)
          )
          const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
          assert.instanceOf(Option.getOrUndefined(defect), RepositoryError)
        }
      }).pipe(Effect.provide(world))
    }))
})

/** The message of the defect a refused call dies with: the memory's `DataValidationError`. */
const refusal = (exit: Exit.Exit<unknown, unknown>): string => {
  const defect = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
  return defect instanceof DataValidationError ? defect.message : `not refused: ${String(defect)}`
}

const emptyRequest: Fake.RecordedRequest = { method: "", url: "", headers: {}, body: {}, rawBody: "" }

/** The message of a backing error's cause: the memory's own error. */
const causeMessage = (error: { readonly _tag: string }): string =>
  error instanceof PersistenceBackingError && error.cause instanceof Error ? error.cause.message : ""
