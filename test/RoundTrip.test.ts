/**
 * The round trip with `@effect/ai`: what `LanguageModel.generateText` returns (text, tool calls,
 * tool results) goes into `addMessages` as it comes, and the context replays it to the provider as
 * the fresh call sent it: the tool call's `arguments` and the tool result's `output` byte for byte,
 * through the real OpenAI client and the local fake server. Then the other inputs (prompt
 * messages, streamed parts, messages in our own form with JSON) and their refusals.
 */
import { LanguageModel, Prompt, Response } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import type { DataValidationError } from "../src/errors/DataValidationError.js"
import type { RepositoryError } from "../src/errors/RepositoryError.js"
import { toPromptMessages, withUserMessage } from "../src/layers/ai/ContextPrompt.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"
import { canonicalJson } from "./fixtures/messages.js"
import { agentModel, Weather, WeatherLive } from "./fixtures/weather.js"

const params = { location: "Paris", unit: "celsius" }
const argumentsText = "{\"location\":\"Paris\",\"unit\":\"celsius\"}"
const outputText = "{\"location\":\"Paris\",\"temperature\":21,\"conditions\":\"sunny\",\"unit\":\"celsius\"}"

/** A fresh memory, the real OpenAI model on the fake server, and the weather tool's handler. */
const world = (script: Fake.Script) =>
  Layer.mergeAll(ChatMemoryTest.layer({ strategy: "noop" }), WeatherLive, agentModel(script))

/** The `input` items of a request, as the server received them. */
const rawItems = (request: Fake.RecordedRequest | undefined): ReadonlyArray<unknown> =>
  Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ input: Schema.Array(Schema.Unknown) })))(
    request?.rawBody ?? "{\"input\":[]}"
  ).input

const none: Fake.RecordedRequest = { method: "", url: "", headers: {}, body: {}, rawBody: "" }

const item = (request: Fake.RecordedRequest | undefined, type: string) =>
  Fake.inputItems(request ?? none).find((entry) => "type" in entry && entry.type === type)

describe("round trip with @effect/ai", () => {
  it.scoped("generateText's response goes in as it comes; the replay sends the provider the same bytes", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const fake = yield* Fake.FakeOpenAi
      const question = "What is the weather in Paris?"

      // The agent's turn, as an app writes it: the model calls the tool, then answers.
      const context = yield* memory.getContext("c", { query: question })
      const prompt = withUserMessage(context, question)
      const first = yield* LanguageModel.generateText({ prompt, toolkit: Weather })
      const second = yield* LanguageModel.generateText({
        prompt: Prompt.merge(prompt, Prompt.fromResponseParts(first.content)),
        toolkit: Weather
      })
      assert.strictEqual(second.text, "It is 21 °C and sunny in Paris.")

      // Stored as they come: no converter.
      const stored = yield* memory.addMessages("c", [
        { role: "user", content: question },
        ...first.content,
        ...second.content
      ])
      assert.deepStrictEqual(stored.map((message) => [message.role, message.content, message.metadata]), [
        ["user", question, {}],
        ["assistant", "", {
          toolCalls: [{ id: "call_1", name: "get_weather", params, paramsJson: argumentsText }]
        }],
        ["tool", outputText, { toolName: "get_weather", toolCallId: "call_1", contentFormat: "json" }],
        ["assistant", "It is 21 °C and sunny in Paris.", {}]
      ])

      // The next turn replays the first from memory.
      const next = yield* memory.getContext("c", { query: "And tomorrow?" })
      yield* LanguageModel.generateText({ prompt: withUserMessage(next, "And tomorrow?"), toolkit: Weather })

      const [, fresh, replay, ...rest] = yield* fake.requests
      assert.strictEqual(rest.length, 0)
      // The tool call and its result, byte for byte as the fresh call sent them.
      assert.strictEqual(JSON.stringify(item(fresh, "function_call")), JSON.stringify(item(replay, "function_call")))
      assert.deepInclude(item(replay, "function_call"), { arguments: argumentsText })
      assert.deepStrictEqual(Fake.toolOutputs(fresh ?? none), [{ callId: "call_1", output: outputText }])
      assert.deepStrictEqual(Fake.toolOutputs(replay ?? none), [{ callId: "call_1", output: outputText }])
      // Indeed the whole fresh request's input is the start of the replay's, item for item.
      const freshItems = rawItems(fresh)
      assert.strictEqual(freshItems.length, 3)
      assert.strictEqual(JSON.stringify(rawItems(replay).slice(0, 3)), JSON.stringify(freshItems))
      assert.deepStrictEqual(rawItems(replay).slice(3), [
        { role: "assistant", content: [{ type: "output_text", text: "It is 21 °C and sunny in Paris." }] },
        { role: "user", content: [{ type: "input_text", text: "And tomorrow?" }] }
      ])
    }).pipe(Effect.provide(world(Fake.sequence(
      Fake.functionCall("get_weather", params),
      Fake.text("It is 21 °C and sunny in Paris."),
      Fake.text("I only know today's weather.")
    )))))
})

const oslo = { location: "Oslo", unit: "celsius" }
const osloWeather = { location: "Oslo", temperature: 4, conditions: "rain", unit: "celsius" }

/** A response as `generateText` gives it: text, a tool call, and the toolkit's result. */
const responseParts: ReadonlyArray<Response.AnyPart> = [
  Response.makePart("response-metadata", {
    id: Option.some("resp_1"),
    modelId: Option.some("agent-model"),
    timestamp: Option.some(DateTime.unsafeMake(0))
  }),
  Response.makePart("text", { text: "Let me check." }),
  Response.makePart("tool-call", { id: "call_9", name: "get_weather", params: oslo, providerExecuted: false }),
  Response.makePart("tool-result", {
    id: "call_9",
    name: "get_weather",
    isFailure: false,
    result: osloWeather,
    encodedResult: osloWeather,
    providerExecuted: false
  })
]

const Memory = ChatMemoryTest.layer({ strategy: "noop" })

/** What the store holds for `id`: role, content, metadata. */
const stored = (id: string) =>
  Effect.flatMap(
    ChatMemoryService,
    (memory) => Effect.map(memory.getMessages(id), (messages) => messages.map((m) => [m.role, m.content, m.metadata]))
  )

/** `addMessages` as a caller outside the type system sees it (method parameters are bivariant). */
interface Untyped {
  addMessages(conversationId: string, messages: unknown): Effect.Effect<unknown, DataValidationError | RepositoryError>
}

const untyped = (memory: ChatMemoryService["Type"]): Untyped => memory

/** The refusal of `messages`, as `[path, reason]`, after checking that nothing was stored. */
const refusal = (messages: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const error = yield* Effect.flip(untyped(memory).addMessages("refused", messages))
    const after = yield* Effect.flip(memory.getMessages("refused"))
    assert.strictEqual(after._tag, "ConversationNotFoundError")
    return error._tag === "DataValidationError" ? [error.path, error.reason] : [error._tag]
  })

describe("addMessages takes @effect/ai input", () => {
  it.effect("response parts, Prompt messages and encoded prompt messages are stored alike, in canonical form", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const question = { role: "user" as const, content: "Weather in Oslo?" }
      yield* memory.addMessages("parts", [question, ...responseParts])
      yield* memory.addMessages("prompt", [
        ...Prompt.make("Weather in Oslo?").content,
        ...Prompt.fromResponseParts(responseParts).content
      ])
      yield* memory.addMessages("encoded", [
        { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] },
        {
          role: "assistant",
          content: [{ type: "text", text: "Let me check." }, {
            type: "tool-call",
            id: "call_9",
            name: "get_weather",
            params: oslo
          }]
        },
        {
          role: "tool",
          content: [{
            type: "tool-result",
            id: "call_9",
            name: "get_weather",
            isFailure: false,
            result: osloWeather,
            providerExecuted: false
          }]
        }
      ])
      const expected = [
        ["user", "Weather in Oslo?", {}],
        ["assistant", "Let me check.", {
          toolCalls: [{
            id: "call_9",
            name: "get_weather",
            params: oslo,
            paramsJson: "{\"location\":\"Oslo\",\"unit\":\"celsius\"}"
          }]
        }],
        ["tool", "{\"location\":\"Oslo\",\"temperature\":4,\"conditions\":\"rain\",\"unit\":\"celsius\"}", {
          toolName: "get_weather",
          toolCallId: "call_9",
          contentFormat: "json"
        }]
      ]
      for (const id of ["parts", "prompt", "encoded"]) {
        const messages = yield* stored(id)
        assert.deepStrictEqual(messages, expected, id)
        // The metadata is in the one form every store returns.
        for (const [, , metadata] of messages) {
          assert.strictEqual(JSON.stringify(metadata), JSON.stringify(canonicalJson(metadata)), id)
        }
      }
      // The context gives back the prompt the fresh call had, part for part.
      const context = yield* memory.getContext("parts")
      const fresh = Prompt.merge(Prompt.make("Weather in Oslo?"), Prompt.fromResponseParts(responseParts))
      const encode = Schema.encodeSync(Prompt.Prompt)
      assert.strictEqual(
        JSON.stringify(encode(Prompt.make(toPromptMessages(context)))),
        JSON.stringify(encode(fresh))
      )
    }).pipe(Effect.provide(Memory)))

  it.effect("streamed parts are put together; each response of a multi-step exchange is a message of its own", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
      const stored = yield* memory.addMessages("stream", [
        { role: "user", content: "Weather in Oslo?" },
        // The first response calls the tool (its params streamed first), and the toolkit answers.
        { type: "response-metadata", id: "resp_1" },
        { type: "tool-params-start", id: "call_9", name: "get_weather" },
        { type: "tool-params-delta", id: "call_9", delta: "{\"location\":" },
        { type: "tool-params-end", id: "call_9" },
        { type: "tool-call", id: "call_9", name: "get_weather", params: oslo },
        { type: "finish", reason: "tool-calls", usage },
        { type: "tool-result", id: "call_9", name: "get_weather", isFailure: false, result: osloWeather },
        // The second answers, in text deltas (an emoji split between two of them), after some reasoning.
        { type: "response-metadata", id: "resp_2" },
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-delta", id: "r", delta: "It rains." },
        { type: "reasoning-end", id: "r" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Rain, 4 °C \uD83C" },
        { type: "text-delta", id: "t", delta: "\uDF27" },
        { type: "text-delta", id: "t", delta: " in Oslo." },
        { type: "text-end", id: "t" },
        { type: "finish", reason: "stop", usage }
      ])
      assert.deepStrictEqual(stored.map((m) => [m.role, m.content, m.metadata.toolCalls?.map((call) => call.id)]), [
        ["user", "Weather in Oslo?", undefined],
        ["assistant", "", ["call_9"]],
        ["tool", JSON.stringify(osloWeather), undefined],
        ["assistant", "Rain, 4 °C \uD83C\uDF27 in Oslo.", undefined]
      ])
    }).pipe(Effect.provide(Memory)))

  it.effect("what a provider does not take back is left out: reasoning, files, the tools it ran itself", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const stored = yield* memory.addMessages("provider", [
        Response.makePart("reasoning", { text: "The user wants code run." }),
        Response.makePart("tool-call", {
          id: "ci_1",
          name: "OpenAiCodeInterpreter",
          params: { code: "1+1" },
          providerName: "code_interpreter",
          providerExecuted: true
        }),
        Response.makePart("tool-result", {
          id: "ci_1",
          name: "OpenAiCodeInterpreter",
          isFailure: false,
          result: { outputs: [] },
          encodedResult: { outputs: [] },
          providerExecuted: true
        }),
        Response.makePart("text", { text: "It is 2." }),
        Response.makePart("finish", {
          reason: "stop",
          usage: new Response.Usage({
            inputTokens: 1,
            outputTokens: 1,
            totalTokens: 2,
            reasoningTokens: undefined,
            cachedInputTokens: undefined
          })
        })
      ])
      assert.deepStrictEqual(stored.map((m) => [m.role, m.content, m.metadata]), [["assistant", "It is 2.", {}]])
    }).pipe(Effect.provide(Memory)))

  it.effect("a tool result that is a string is stored as it is; a failure is marked, and replayed as one", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("strings", [
        { role: "user", content: "What time is it, and is the printer on?" },
        Response.makePart("tool-call", { id: "a", name: "time", params: {}, providerExecuted: false }),
        Response.makePart("tool-call", { id: "b", name: "printer", params: {}, providerExecuted: false }),
        Response.makePart("tool-result", {
          id: "a",
          name: "time",
          isFailure: false,
          result: "10:30",
          encodedResult: "10:30",
          providerExecuted: false
        }),
        Response.makePart("tool-result", {
          id: "b",
          name: "printer",
          isFailure: true,
          result: "",
          encodedResult: "",
          providerExecuted: false
        })
      ])
      assert.deepStrictEqual((yield* stored("strings")).slice(2), [
        ["tool", "10:30", { toolName: "time", toolCallId: "a" }],
        ["tool", "\"\"", { isError: true, toolName: "printer", toolCallId: "b", contentFormat: "json" }]
      ])
      const replayed = toPromptMessages(yield* memory.getContext("strings")).flatMap((message) =>
        message.role === "tool" ? message.content.map((part) => [part.result, part.isFailure]) : []
      )
      assert.deepStrictEqual(replayed, [["10:30", false], ["", true]])
    }).pipe(Effect.provide(Memory)))

  it.effect("our own form: a tool result marked as JSON is replayed as its value, key order and all", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("own", [
        { role: "user", content: "Stock of R-290?" },
        {
          role: "assistant",
          content: "",
          metadata: {
            toolCalls: [{
              id: "c1",
              name: "check_inventory",
              params: { warehouse: "north", sku: "R-290" },
              paramsJson: "{\"warehouse\": \"north\", \"sku\": \"R-290\"}"
            }]
          }
        },
        {
          role: "tool",
          content: "{\"sku\":\"R-290\",\"available\":40}",
          metadata: { toolCallId: "c1", contentFormat: "json" }
        },
        { role: "tool", content: "{\"legacy\":true}", metadata: { toolCallId: "c1" } }
      ])
      const messages = toPromptMessages(yield* memory.getContext("own"))
      const parts = messages.flatMap((message) =>
        message.role === "assistant" || message.role === "tool"
          ? (typeof message.content === "string" ? [] : message.content)
          : []
      )
      assert.deepStrictEqual(
        parts.map((part) =>
          part.type === "tool-call"
            ? JSON.stringify(part.params)
            : part.type === "tool-result"
            ? JSON.stringify(part.result)
            : part.type
        ),
        [
          "{\"warehouse\":\"north\",\"sku\":\"R-290\"}",
          "{\"sku\":\"R-290\",\"available\":40}",
          // Not marked: a string, as before.
          "\"{\\\"legacy\\\":true}\""
        ]
      )
    }).pipe(Effect.provide(Memory)))
})

class Clock {
  readonly hour = 10
}

describe("addMessages refuses bad @effect/ai input naming the field, and stores nothing of the call", () => {
  it.effect.each([
    {
      name: "a Date in a tool call's params",
      messages: [
        { role: "user" as const, content: "When?" },
        Response.makePart("tool-call", { id: "a", name: "t", params: { when: new Date(0) }, providerExecuted: false })
      ],
      expected: ["messages[1].params.when", "must be plain JSON data, not a Date"]
    },
    {
      name: "a class instance in a tool result",
      messages: [
        Response.makePart("tool-result", {
          id: "a",
          name: "t",
          isFailure: false,
          result: null,
          encodedResult: { clock: new Clock() },
          providerExecuted: false
        })
      ],
      expected: ["messages[0].encodedResult.clock", "must be plain JSON data, not an instance of Clock"]
    },
    {
      name: "a NUL in a tool result",
      messages: [
        {
          role: "tool" as const,
          content: [{
            type: "tool-result" as const,
            id: "a",
            name: "t",
            isFailure: false,
            result: "a\u0000b",
            providerExecuted: false
          }]
        }
      ],
      expected: ["messages[0].content[0].result", "must not contain NUL (U+0000) characters"]
    },
    {
      name: "a file part in a user message",
      messages: [{
        role: "user" as const,
        content: [{ type: "text" as const, text: "Look:" }, {
          type: "file" as const,
          mediaType: "image/png",
          data: "aGk="
        }]
      }],
      expected: ["messages[0].content[1]", "is a file part: only text is stored"]
    },
    {
      name: "an empty tool call id",
      messages: [
        { role: "assistant" as const, content: [{ type: "tool-call" as const, id: "", name: "t", params: {} }] }
      ],
      expected: ["messages[0].content[0].id", "must not be empty"]
    },
    {
      name: "a part of no known type",
      messages: [{ type: "text-stream", text: "hi" }],
      expected: ["messages[0].type", "must be the type of an @effect/ai response part"]
    },
    {
      // With a role, it is read as a message in our own form.
      name: "a part with a role",
      messages: [{ type: "text", text: "hi", role: "assistant" }],
      expected: ["messages[0].text", "is unexpected"]
    },
    {
      name: "contentFormat on a user message",
      messages: [{ role: "user" as const, content: "{}", metadata: { contentFormat: "json" as const } }],
      expected: ["messages[0].metadata.contentFormat", "is allowed on tool messages only"]
    },
    {
      name: "a JSON tool result that is not JSON",
      messages: [{
        role: "tool" as const,
        content: "{oops",
        metadata: { toolCallId: "a", contentFormat: "json" as const }
      }],
      expected: ["messages[0].content", "must be JSON text (metadata.contentFormat is \"json\"): "]
    },
    {
      name: "paramsJson that is not the text of params",
      messages: [{
        role: "assistant" as const,
        content: "",
        metadata: { toolCalls: [{ id: "a", name: "t", params: { a: 1 }, paramsJson: "{\"a\":2}" }] }
      }],
      expected: ["messages[0].metadata.toolCalls[0].paramsJson", "must be the JSON text of params"]
    }
  ])("$name", ({ expected, messages }) =>
    Effect.gen(function*() {
      const [path, reason] = yield* refusal([{ role: "user", content: "A valid message first." }, ...messages])
      // The valid message first shifts every index by one.
      assert.strictEqual(path, expected[0]?.replace(/^messages\[(\d+)\]/, (_, i) => `messages[${Number(i) + 1}]`))
      assert.isTrue(typeof reason === "string" && reason.startsWith(expected[1] ?? ""), String(reason))
    }).pipe(Effect.provide(Memory)))

  it.effect("a getter that throws in a tool call's params is refused, not a defect", () =>
    Effect.gen(function*() {
      const params = {
        get city(): string {
          throw new Error("boom")
        }
      }
      const result = yield* refusal([
        Response.makePart("tool-call", { id: "a", name: "t", params, providerExecuted: false })
      ])
      assert.deepStrictEqual(result, ["messages[0].params.city", "could not be read: a getter or a proxy trap threw"])
    }).pipe(Effect.provide(Memory)))
})
