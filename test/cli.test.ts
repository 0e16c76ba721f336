/**
 * The command line: the bundled conversation replayed on the default store, broken inputs, the
 * commands on a stored conversation, and `chat` against a local fake of the OpenAI API. The
 * program runs in this process (as `main.ts` runs it, with the real file system); `npm start` and
 * a failure are also run as the real bin, in a process of their own.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Schema, TestClock } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Transcript from "../src/cli/Transcript.js"
import { assertOneLineFailure, bundled, cli, root, spawnCli, tempDir } from "./fixtures/cli.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const Entry = Schema.Struct({ role: Schema.String, content: Schema.String })
const transcript = readFileSync(bundled, "utf8").split("\n").filter((line) => line.trim().length > 0)
  .map((line) => Schema.decodeUnknownSync(Schema.parseJson(Entry))(line))
/** The seq (1-based position) at which each turn starts: at a user message, the opening going with the first. */
const turnStarts = transcript.flatMap((m, i) => (m.role === "user" ? [i + 1] : []))
const leadingSystem = transcript.findIndex((m) => m.role !== "system")

const TurnRecord = Schema.Struct({
  turn: Schema.Int,
  lastSeq: Schema.Int,
  contextTokens: Schema.Int,
  turnsShown: Schema.Int,
  turnsCovered: Schema.Int,
  turnsOmitted: Schema.Int,
  omissionAnnounced: Schema.Boolean,
  messagesOmitted: Schema.Int,
  summarizedUpTo: Schema.Int,
  systemCount: Schema.Int,
  systemTokens: Schema.Int,
  recentFromSeq: Schema.NullOr(Schema.Int),
  recentToSeq: Schema.NullOr(Schema.Int),
  recentCount: Schema.Int,
  lastKTokens: Schema.Int,
  prefixVersion: Schema.String,
  appendOnly: Schema.Boolean,
  turnsRecalled: Schema.Int
})

const ReplayJson = Schema.parseJson(Schema.Struct({
  budget: Schema.NullOr(Schema.Int),
  kRawTurns: Schema.Int,
  turns: Schema.Int,
  messages: Schema.Int,
  turnsOmitted: Schema.Int,
  prefixKept: Schema.Int,
  configuration: Schema.Struct({ strategy: Schema.String, store: Schema.String, summarizer: Schema.String }),
  stats: Schema.Struct({
    messagesStored: Schema.Int,
    turnsShown: Schema.Int,
    turnsOmitted: Schema.Int,
    summarizations: Schema.Int,
    summarizerInputTokens: Schema.Int,
    tokensStored: Schema.Int,
    prefixChanges: Schema.Int
  }),
  perTurn: Schema.Array(TurnRecord),
  context: Schema.Struct({
    turnsOmitted: Schema.Int,
    recent: Schema.Array(Schema.Struct({ seq: Schema.Int, role: Schema.String, content: Schema.String }))
  })
}))

const EvalJson = Schema.parseJson(Schema.Struct({
  asked: Schema.Int,
  configuration: Schema.Struct({ store: Schema.String }),
  results: Schema.Array(Schema.Struct({
    label: Schema.String,
    recall: Schema.Boolean,
    inContext: Schema.Int,
    questions: Schema.Array(Schema.Struct({ id: Schema.String, contextTokens: Schema.Int }))
  }))
}))

describe("Transcript.parse", () => {
  const user = JSON.stringify({ role: "user", content: "Where is ORD-1?" })
  const answer = JSON.stringify({ role: "assistant", content: "Shipped.", metadata: { modelVariant: "mini" } })

  it.effect("JSONL (blank lines and CRLF endings allowed) and a JSON array give the same messages", () =>
    Effect.gen(function*() {
      const fromLines = yield* Transcript.parse("t.jsonl", `${user}\r\n\r\n${answer}\r\n`)
      const fromArray = yield* Transcript.parse("t.json", `[${user}, ${answer}]`)
      assert.deepStrictEqual(fromLines, fromArray)
      assert.deepStrictEqual(fromLines.map((m) => m.role), ["user", "assistant"])
    }))

  it.effect("a bad entry is named by its line in JSONL (blank lines counted), by its position in an array", () =>
    Effect.gen(function*() {
      const line = yield* Effect.flip(Transcript.parse("t.jsonl", `${user}\n\n{"role":"user"}\n`))
      assert.deepStrictEqual([line.line, line.message], [3, "t.jsonl: line 3: invalid content: is missing"])
      const entry = yield* Effect.flip(Transcript.parse("t.json", `[${user}, {"role": "robot", "content": "x"}]`))
      assert.deepStrictEqual([entry.line, entry.entry], [undefined, 2])
      assert.include(entry.message, "t.json: entry 2: invalid role")
    }))

  it.effect("a line's createdAt is when it was said; a bad one, or one ahead of the clock, is refused by its line", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-25T12:00:00Z"))
      const dated = JSON.stringify({ role: "user", content: "Hi", createdAt: "2026-03-14T10:12:00+01:00" })
      const [message] = yield* Transcript.parse("t.jsonl", `${dated}\n${answer}\n`)
      assert.strictEqual(message?.createdAt && DateTime.formatIso(message.createdAt), "2026-03-14T09:12:00.000Z")
      assert.deepStrictEqual(message && Transcript.toInput(message), {
        role: "user",
        content: "Hi",
        createdAt: "2026-03-14T09:12:00.000Z"
      })
      const bad = yield* Effect.flip(
        Transcript.parse("t.jsonl", `${user}\n{"role":"user","content":"x","createdAt":"2026-03-14"}\n`)
      )
      assert.strictEqual(
        bad.message,
        "t.jsonl: line 2: invalid createdAt: must be an ISO 8601 date and time with a time zone, e.g. \"2026-03-14T09:12:00Z\""
      )
      const ahead = yield* Effect.flip(
        Transcript.parse("t.json", `[${user}, {"role":"user","content":"x","createdAt":"2026-11-25T12:06:00Z"}]`)
      )
      assert.include(ahead.message, "t.json: entry 2: invalid createdAt: must not be later than the time of the write")
    }))

  it.effect("an empty transcript is refused", () =>
    Effect.gen(function*() {
      for (const text of ["", "\n\n", "[]"]) {
        assert.include((yield* Effect.flip(Transcript.parse("t", text))).message, "holds no messages")
      }
    }))
})

describe("CLI: replay of the bundled conversation", () => {
  it.live(
    "with no arguments (npm start): PGlite, the offline summarizer, the final context and the stats table",
    () =>
      Effect.gen(function*() {
        const run = yield* spawnCli([])
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stdout, "Context for the next model call (summarization")
        const last = transcript[transcript.length - 1]
        assert.include(run.stdout, `${last?.role.padEnd(9)}| ${last?.content}`)
        // The figures in plain words, each setting with the option that sets it.
        const rows = run.stdout.split("\n").map((line) => line.trim().split(/ {2,}/))
        const row = (label: string) => rows.find(([first]) => first === label)?.[1] ?? ""
        assert.strictEqual(row("messages stored"), String(transcript.length))
        assert.strictEqual(row("recent turns always shown"), "3 (--k-raw-turns)")
        assert.strictEqual(row("token budget"), "3000 tokens (--budget)")
        assert.strictEqual(
          row("a summary is made"),
          "when unsummarized turns fill 90 % of the room for turns (--high-water), down to 25 % (--low-water)"
        )
        assert.strictEqual(row("turns shown"), "the newest that fit, summarized or not (--view full)")
        assert.match(row("store"), /^PGlite at .+ \(--data-dir\)$/)
        assert.match(row("summarizer"), /^extractive, offline: no model \(OPENAI_API_KEY or OPENAI_BASE_URL for one\)$/)
        assert.match(row("context now"), /^\d+ of 3000 tokens \(--budget\); the largest at any turn: \d+$/)
        assert.match(row("summarizer tokens"), /^\d+ read, \d+ written$/)
        assert.match(
          row("summary covers"),
          /^messages up to #\d+; \d+ newer messages \(\d+ tokens\) not summarized yet$/
        )
        assert.match(
          row("turns left out"),
          /^0 now \(neither shown nor summarized\); none after any of the 330 turns$/
        )
        assert.match(row("prompt only added to"), /^at \d+ of 329 turns /)
        assert.match(row("summaries cut to the cap"), /^0 \(over 500 tokens even when asked again; --cap\)$/)
        assert.strictEqual(
          row("newest turns shown word for word"),
          "the last 3 (--k-raw-turns), after 330 of the 330 turns where they fit the budget"
        )
        assert.match(row("time"), /ms a turn\)$/)
        // No jargon left: the words the figures once used.
        const figures = run.stdout.slice(run.stdout.indexOf("\nSettings:"))
        assert.notMatch(figures, /watermarks|(?<!--)view full|prefix kept|K = |\blag\b|\bseq\b/)
        assert.notMatch(run.stdout, /replay: \d+\/\d+ turns/, "progress goes to stderr")
      })
  )

  it.live(
    "--json: the context never exceeds the budget, the last K turns are verbatim, omitted turns are reported",
    () =>
      Effect.gen(function*() {
        const run = yield* cli(["replay", "--json"])
        assert.strictEqual(run.code, 0, run.stderr)
        const report = Schema.decodeUnknownSync(ReplayJson)(run.stdout)
        assert.deepStrictEqual(report.configuration, {
          strategy: "summarization",
          store: "pglite",
          summarizer: "extractive"
        })
        assert.deepStrictEqual([report.turns, report.messages, report.stats.messagesStored], [
          turnStarts.length,
          transcript.length,
          transcript.length
        ])
        assert.strictEqual(report.perTurn.length, turnStarts.length)
        const budget = report.budget ?? 0
        const k = report.kRawTurns
        assert.isAbove(budget, 0)
        assert.isAbove(report.stats.summarizations, 0)
        let fitting = 0
        for (const [i, t] of report.perTurn.entries()) {
          // 1. The budget holds at every turn.
          assert.isAtMost(t.contextTokens, budget, `turn ${t.turn}`)
          assert.strictEqual(t.lastSeq, (turnStarts[i + 1] ?? transcript.length + 1) - 1)
          // 2. The last K turns are there, whole and in order, whenever they fit.
          const lastKFrom = turnStarts[Math.max(0, i + 1 - k)] ?? 0
          if (t.systemTokens + t.lastKTokens <= budget) {
            fitting++
            assert.isAtMost(t.recentFromSeq ?? Infinity, lastKFrom, `turn ${t.turn}`)
            assert.strictEqual(t.recentToSeq, t.lastSeq)
            assert.strictEqual(t.recentCount, t.lastSeq - (t.recentFromSeq ?? 0) + 1, `turn ${t.turn}: a gap`)
          }
          // 3. Every message after the cursor is shown or counted as omitted (the full view also
          // shows turns the summary covers, when they fit: those are not counted here).
          const coveredShown = t.recentFromSeq === null || t.recentToSeq === null
            ? 0
            : Math.max(0, Math.min(t.summarizedUpTo, t.recentToSeq) - t.recentFromSeq + 1)
          assert.strictEqual(
            t.recentCount - coveredShown + t.messagesOmitted,
            t.lastSeq - Math.max(t.summarizedUpTo, leadingSystem)
          )
          assert.strictEqual(t.turnsOmitted > 0, t.messagesOmitted > 0)
        }
        assert.strictEqual(fitting, report.perTurn.length)
        // The defaults (watermarks, full view, recall on: each turn's context asked with the next
        // user message): no turn is ever left out unsummarized, with few, large folds that read the
        // conversation about once.
        assert.deepStrictEqual(report.perTurn.filter((t) => t.turnsOmitted > 0).map((t) => t.turn), [])
        assert.isAbove(report.perTurn.filter((t) => t.turnsRecalled > 0).length, turnStarts.length / 2)
        assert.isAtMost(report.stats.summarizations, 32)
        assert.isAtMost(report.stats.summarizerInputTokens, 1.35 * report.stats.tokensStored)
        // The final context ends with the transcript's last K turns, verbatim.
        const tail = transcript.slice((turnStarts[turnStarts.length - k] ?? 1) - 1)
        assert.deepStrictEqual(
          report.context.recent.slice(-tail.length).map((m) => ({ role: m.role, content: m.content })),
          tail
        )
        assert.deepStrictEqual([report.turnsOmitted, report.stats.turnsOmitted], [
          report.context.turnsOmitted,
          report.context.turnsOmitted
        ])
        assert.include(run.stderr, `replay: ${turnStarts.length}/${turnStarts.length} turns`)
      })
  )

  it.live(
    "--view stable: nothing omitted, and the rendered prompt only grows between folds on at least 90 % of the turns",
    () =>
      Effect.gen(function*() {
        const run = yield* cli(["replay", "--view", "stable", "--store", "memory", "--json"])
        assert.strictEqual(run.code, 0, run.stderr)
        const report = Schema.decodeUnknownSync(ReplayJson)(run.stdout)
        assert.deepStrictEqual(report.perTurn.filter((t) => t.turnsOmitted > 0).map((t) => t.turn), [])
        const appendOnly = report.perTurn.filter((t) => t.appendOnly).length
        assert.isAtLeast(appendOnly, 0.9 * (turnStarts.length - 1))
        // The prefix version changes exactly when the rendered prompt stops being an extension.
        for (const [i, t] of report.perTurn.entries()) {
          const same = i > 0 && t.prefixVersion === report.perTurn[i - 1]?.prefixVersion
          assert.strictEqual(same, t.appendOnly, `turn ${t.turn}`)
        }
        assert.strictEqual(report.prefixKept, appendOnly)
        // One change for the first context, one per turn that is not an extension; the final read keeps it.
        assert.strictEqual(report.stats.prefixChanges, turnStarts.length - appendOnly)
      })
  )

  it.live(
    "the defaults show at least as many turns as the former default (threshold 6000) wherever that one omits nothing",
    () =>
      Effect.gen(function*() {
        // Recall off: the recalled block takes room from covered turns, and this compares what the
        // two policies show of the recent turns.
        const replay = (args: ReadonlyArray<string>) =>
          Effect.map(cli(["replay", "--store", "memory", "--json", "--recall", "off", ...args]), (run) => {
            assert.strictEqual(run.code, 0, run.stderr)
            return Schema.decodeUnknownSync(ReplayJson)(run.stdout)
          })
        const current = yield* replay([])
        const former = yield* replay(["--threshold", "6000", "--view", "stable"])
        let compared = 0
        for (const [i, before] of former.perTurn.entries()) {
          const now = current.perTurn[i]
          assert.strictEqual(now?.turnsOmitted, 0, `turn ${before.turn}`)
          if (before.turnsOmitted > 0) continue
          compared++
          assert.isAtLeast(now?.turnsShown ?? 0, before.turnsShown, `turn ${before.turn}`)
        }
        // The former default leaves turns out at most turns of this conversation: the comparison
        // covers the turns where it does not, and the rest is where it gave up older turns silently.
        assert.isAbove(compared, 10)
        assert.isAbove(former.perTurn.filter((t) => t.turnsOmitted > 0).length, 250)
      })
  )

  it.live(
    "eval on the bundled questions, offline defaults: recall holds the answer for 2x the questions and at least 75 %",
    () =>
      Effect.gen(function*() {
        const run = yield* cli(["eval", "--strategies", "summarization", "--json"])
        assert.strictEqual(run.code, 0, run.stderr)
        const report = Schema.decodeUnknownSync(EvalJson)(run.stdout)
        assert.strictEqual(report.configuration.store, "pglite")
        const off = report.results.find((r) => !r.recall)
        const on = report.results.find((r) => r.recall)
        assert.isDefined(off)
        assert.isDefined(on)
        assert.isAtLeast(on?.inContext ?? 0, 2 * (off?.inContext ?? Infinity))
        assert.isAtLeast(on?.inContext ?? 0, 0.75 * report.asked)
        // The budget held on every context, the questions' own included.
        for (const r of report.results) {
          for (const q of r.questions) assert.isAtMost(q.contextTokens, 3000, `${r.label} ${q.id}`)
        }
      })
  )

  it.live("--strategy sliding-window: every turn is shown or reported omitted", () =>
    Effect.gen(function*() {
      const run = yield* cli(["replay", bundled, "--strategy", "sliding-window", "--store", "memory", "--json"])
      assert.strictEqual(run.code, 0, run.stderr)
      const report = Schema.decodeUnknownSync(ReplayJson)(run.stdout)
      assert.strictEqual(report.configuration.strategy, "sliding-window")
      assert.strictEqual(report.stats.summarizations, 0)
      assert.isAbove(report.turnsOmitted, 0)
      assert.strictEqual(report.stats.turnsShown + report.stats.turnsOmitted, turnStarts.length)
      for (const t of report.perTurn) assert.strictEqual(t.turnsShown + t.turnsOmitted, t.turn)
    }))
})

describe("CLI: bad input gives one line and a non-zero exit", () => {
  it.live(
    "a missing transcript",
    () =>
      Effect.map(
        cli(["replay", "no/such/transcript.jsonl"]),
        (run) => assertOneLineFailure(run, "no/such/transcript.jsonl", "not found")
      )
  )

  it.live("the real bin: the same one line, exit code 1 and no stack trace from the process", () =>
    Effect.map(spawnCli(["replay", "no/such/transcript.jsonl"]), (run) => {
      assert.strictEqual(run.code, 1)
      assertOneLineFailure({ code: 1, stdout: run.stdout, stderr: run.stderr }, "no/such/transcript.jsonl", "not found")
    }))

  it.scoped("a malformed JSONL line, by its number", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = join(dir, "broken.jsonl")
      writeFileSync(
        path,
        [...transcript.slice(0, 3).map((m) => JSON.stringify(m)), "{\"role\": \"user\", oops"].join("\n")
      )
      assertOneLineFailure(yield* cli(["replay", path]), "broken.jsonl", "line 4", "not valid JSON")
      writeFileSync(path, `${JSON.stringify(transcript[1])}\n\n${JSON.stringify({ role: "robot", content: "hi" })}\n`)
      assertOneLineFailure(yield* cli(["replay", path]), "line 3", "role")
    }))

  it.live("an unknown strategy, by flag or by variable, naming the allowed values", () =>
    Effect.gen(function*() {
      const allowed = "noop, sliding-window, summarization, hierarchical"
      assertOneLineFailure(yield* cli(["replay", "--strategy", "lru"]), "--strategy", "MEMORY_STRATEGY", allowed, "lru")
      assertOneLineFailure(yield* cli(["replay"], { env: { MEMORY_STRATEGY: "lru" } }), "MEMORY_STRATEGY", allowed)
    }))

  it.live(
    "chat without a key or base URL says what it needs",
    () => Effect.map(cli(["chat"]), (run) => assertOneLineFailure(run, "OPENAI_API_KEY", "OPENAI_BASE_URL"))
  )
})

describe("CLI: commands on a stored conversation", () => {
  it.scoped(
    "replay into a data directory, then messages, inspect, context and clear read it",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const env = { MEMORY_DATA_DIR: join(dir, "db") }
        // A JSON array is a transcript too.
        const path = join(dir, "short.json")
        writeFileSync(path, JSON.stringify(transcript.slice(0, 9)))
        const replay = yield* cli(["replay", path, "--conversation", "short", "--json"], { env })
        assert.strictEqual(replay.code, 0, replay.stderr)
        assert.strictEqual(Schema.decodeUnknownSync(ReplayJson)(replay.stdout).messages, 9)

        const messages = yield* cli(["messages", "short", "--limit", "2", "--before", "9"], { env })
        assert.strictEqual(messages.code, 0, messages.stderr)
        assert.include(messages.stdout, `#7 ${transcript[6]?.role}`)
        assert.include(messages.stdout, `| ${transcript[7]?.content}`)
        assert.notInclude(messages.stdout, "#6 ")

        const inspect = yield* cli(["inspect", "short", "--json"], { env })
        assert.strictEqual(inspect.code, 0, inspect.stderr)
        const state = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({
          conversation: Schema.Struct({ messageCount: Schema.Int, lastSeq: Schema.Int }),
          summaryState: Schema.Struct({ cursor: Schema.Int, facts: Schema.Array(Schema.Unknown) }),
          summarizations: Schema.Array(Schema.Unknown)
        })))(inspect.stdout)
        assert.deepStrictEqual([state.conversation.messageCount, state.conversation.lastSeq], [9, 9])

        const context = yield* cli(["context", "short"], { env })
        assert.strictEqual(context.code, 0, context.stderr)
        assert.include(context.stdout, transcript[8]?.content ?? "")

        const clear = yield* cli(["clear", "short"], { env })
        assert.strictEqual(clear.code, 0, clear.stderr)
        assertOneLineFailure(yield* cli(["context", "short"], { env }), "Conversation not found")
      })
  )

  it.live(
    "on the in-memory store, an unknown conversation says how to keep conversations",
    () =>
      Effect.map(
        cli(["inspect", "nothing-here", "--store", "memory"]),
        (run) => assertOneLineFailure(run, "Conversation not found", "MEMORY_DATA_DIR")
      )
  )
})

describe("CLI: a transcript with times", () => {
  const dated = join(root, "test", "fixtures", "dated.jsonl")
  const flags = ["--budget", "600", "--cap", "80", "--k", "2", "--view", "stable"]
  const query = "Which extras were added, the mudguards and the rear rack?"
  /** The context of the replayed transcript at `path`, with recall for `query`. */
  const replayed = (path: string, env: Record<string, string>) =>
    Effect.gen(function*() {
      const replay = yield* cli(["replay", path, "--conversation", "bikes", ...flags], { env })
      assert.strictEqual(replay.code, 0, replay.stderr)
      const context = yield* cli(["context", "bikes", "--query", query, ...flags], { env })
      assert.strictEqual(context.code, 0, context.stderr)
      return context.stdout
    })

  it.scoped("said on several days: replay keeps the times, and the context shows their dates", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = yield* replayed(dated, { MEMORY_DATA_DIR: join(dir, "db") })
      assert.include(context, "[seq 4-5, 2026-03-14 09:20 UTC]")
      assert.include(context, "[2026-03-16 17:58 UTC] Thanks. Could you also send the invoice by email?")
      const messages = yield* cli(["messages", "bikes", "--json"], { env: { MEMORY_DATA_DIR: join(dir, "db") } })
      assert.include(messages.stdout, "2026-03-14T09:12:00.000Z")
    }))

  it.scoped("said within one day: the recalled turns show their times, no dates", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = join(dir, "one-day.jsonl")
      writeFileSync(path, readFileSync(dated, "utf8").replace(/2026-03-1[56]T/g, "2026-03-14T"))
      const context = yield* replayed(path, { MEMORY_DATA_DIR: join(dir, "db") })
      assert.include(context, "[seq 4-5, 09:20 UTC]")
      assert.notMatch(context, /\d{4}-\d{2}-\d{2}/)
    }))
})

describe("CLI: chat", () => {
  it.scoped(
    "talks to the configured server over the memory's context, and stores the exchange",
    () =>
      Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const run = yield* cli(["chat", "demo", "--store", "memory", "--model", "chat-model"], {
          env: { OPENAI_BASE_URL: fake.apiUrl },
          stdin: "Where is order ORD-42?\nexit\n"
        })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stdout, "assistant> It shipped on Monday.")
        const [request] = yield* fake.requests
        assert.strictEqual(request?.body.model, "chat-model")
        assert.deepStrictEqual(request === undefined ? [] : Fake.userTexts(request), ["Where is order ORD-42?"])
        assert.include(run.stderr, "3 messages stored")
      }).pipe(Effect.provide(Fake.layer(Fake.text("It shipped on Monday."))))
  )
})
