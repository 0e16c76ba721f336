/**
 * The command line with users: `replay` of a transcript of several conversations stores them as one
 * user's, `context --user` of an id not stored yet shows what a new conversation of the user gets,
 * an unknown id without a user and another user's conversation fail in one line, `chat --user`
 * starts a new conversation that knows the user, and `eval --user` keeps each run's user its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assertOneLineFailure, cli, tempDir } from "./fixtures/cli.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const said = (conversation: string, role: "user" | "assistant", content: string, at: string) =>
  JSON.stringify({ conversation, role, content, createdAt: at })

/** Two conversations of one person, a week apart: a dog and a flat, then a bike repair. */
const transcript = [
  said("march", "user", "Hi! My dog is called Biscuit and I live at 14 Rowan Street.", "2026-03-02T09:00:00Z"),
  said("march", "assistant", "Noted: Biscuit, 14 Rowan Street.", "2026-03-02T09:00:10Z"),
  said("march", "user", "Please book the groomer for Biscuit on Friday.", "2026-03-02T09:01:00Z"),
  said("march", "assistant", "Booked the groomer for Friday 6 March.", "2026-03-02T09:01:10Z"),
  said("april", "user", "My bike needs a new chain, order CHN-5512 please.", "2026-04-09T18:00:00Z"),
  said("april", "assistant", "Ordered chain CHN-5512.", "2026-04-09T18:00:10Z")
].join("\n")

const ReplayJson = Schema.parseJson(Schema.Struct({
  userId: Schema.NullOr(Schema.String),
  conversations: Schema.Array(Schema.String),
  turns: Schema.Int,
  messages: Schema.Int
}))

/** A data directory holding the transcript, replayed as `tess`'s. */
const replayed = Effect.gen(function*() {
  const dir = yield* tempDir
  const env = { MEMORY_DATA_DIR: join(dir, "db") }
  const path = join(dir, "tess.jsonl")
  writeFileSync(path, transcript)
  const replay = yield* cli(["replay", path, "--conversation", "tess", "--user", "tess", "--json"], { env })
  assert.strictEqual(replay.code, 0, replay.stderr)
  return { env, replay: Schema.decodeUnknownSync(ReplayJson)(replay.stdout) }
})

describe("CLI: users", () => {
  it.scoped("replay stores a transcript of several conversations as the user's, one id each", () =>
    Effect.gen(function*() {
      const { replay } = yield* replayed
      assert.deepStrictEqual(replay, {
        userId: "tess",
        conversations: ["tess-march", "tess-april"],
        turns: 3,
        messages: 6
      })
    }))

  it.scoped("context --user of an id not stored yet shows what a new conversation of the user gets", () =>
    Effect.gen(function*() {
      const { env } = yield* replayed
      const fresh = yield* cli(["context", "tess-may", "--user", "tess"], { env })
      assert.strictEqual(fresh.code, 0, fresh.stderr)
      // The digest of the user's conversations, newest first.
      assert.isBelow(fresh.stdout.indexOf("2026-04-09"), fresh.stdout.indexOf("2026-03-02"))
      assert.include(fresh.stdout, "CHN-5512")
      // With a query, the turns of an earlier conversation that match it.
      const recalled = yield* cli(["context", "tess-may", "--user", "tess", "--query", "What is my dog called?"], {
        env
      })
      assert.strictEqual(recalled.code, 0, recalled.stderr)
      assert.include(recalled.stdout, "Biscuit")
      // Without the user, an unknown id is still a mistyped one.
      assertOneLineFailure(yield* cli(["context", "tess-may"], { env }), "Conversation not found", "tess-may")
    }))

  it.scoped("another user's conversation, or a user id that is not one, fails in one line naming the user", () =>
    Effect.gen(function*() {
      const { env } = yield* replayed
      assertOneLineFailure(
        yield* cli(["context", "tess-march", "--user", "ravi"], { env }),
        "invalid --user: the conversation belongs to another user"
      )
      const other = yield* cli(["context", "ravi-new", "--user", "ravi", "--query", "Biscuit"], { env })
      assert.strictEqual(other.code, 0, other.stderr)
      assert.notInclude(other.stdout, "Biscuit")
      assert.notInclude(other.stdout, "Rowan")
      assertOneLineFailure(yield* cli(["context", "tess-may", "--user", "tab\there"], { env }), "--user", "control")
      // A bad user is refused before a replay clears the earlier one of the same id.
      assertOneLineFailure(
        yield* cli(["replay", "--conversation", "tess-march", "--user", ""], { env }),
        "invalid --user: must not be empty"
      )
      assert.include((yield* cli(["messages", "tess-march"], { env })).stdout, "#1")
      // The MCP server refuses another user's conversation when it starts, not on every call.
      assertOneLineFailure(
        yield* cli(["mcp", "--conversation", "tess-march", "--user", "ravi"], { env, stdin: "" }),
        "invalid --user: the conversation belongs to another user"
      )
    }))

  it.scoped("chat --user: a new conversation of the user sends the model what the user said before", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const { env } = yield* replayed
      const run = yield* cli(["chat", "tess-may", "--user", "tess", "--model", "chat-model"], {
        env: { ...env, OPENAI_BASE_URL: fake.apiUrl },
        stdin: "Can you remind me of my dog's name?\nexit\n"
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stderr, `chat "tess-may" of user "tess"`)
      const request = (yield* fake.requests).find((r) => r.body.model === "chat-model")
      assert.include(request?.rawBody ?? "", "Biscuit")
      // The exchange is the user's: a later context of the user finds it.
      const context = yield* cli(["context", "tess-june", "--user", "tess", "--query", "dog's name"], { env })
      assert.include(context.stdout, "Can you remind me of my dog's name?")
    }).pipe(Effect.provide(Fake.layer(Fake.text("Your dog is Biscuit.")))))
})
