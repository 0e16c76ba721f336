/**
 * The questions files shipped with the examples: every answer is said, word for word, in the turn
 * the file says it was stated, and nowhere from the turn after its last statement to the turn it
 * is asked (a tool call's arguments included: the context shows them), at least 60 turns before.
 * A question that fails this measures the window, not the memory. The hard kinds keep their own
 * promise: a `paraphrase` shares no word with its answer's turn, a `when` question's answer is a
 * date said in its turn or the date of that turn (from the transcript's `createdAt`, of no turn in
 * the 60 before the question), and a `multi-turn` question needs both of two turns said at least
 * 30 turns apart.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Eval from "../src/cli/Eval.js"
import * as Transcript from "../src/cli/Transcript.js"
import type { MessageInput } from "../src/domain/Message.js"
import { documentTerms, queryTerms } from "../src/layers/store/internal/search.js"

const examples = fileURLToPath(new URL("../examples/", import.meta.url))

const files = readdirSync(examples).filter((name) => name.endsWith(".questions.json")).sort().map((name) =>
  `${examples}${name}`
)

/** Everything a turn says, as a context would show it: contents and tool calls' arguments. */
const said = (turn: ReadonlyArray<MessageInput>): string =>
  turn.map((message) =>
    [message.content, ...(message.metadata?.toolCalls ?? []).map((call) => JSON.stringify(call.params))].join(" ")
  ).join("\n")

/** Everything a turn is found by: contents, and tool calls' names and arguments. */
const searched = (turn: ReadonlyArray<MessageInput>): string =>
  turn.map((message) =>
    [
      message.content,
      ...(message.metadata?.toolCalls ?? []).map((call) => `${call.name} ${JSON.stringify(call.params)}`)
    ]
      .join(" ")
  ).join("\n")

/** The least distance between the two turns of a multi-turn question. */
const farApart = 30

const Line = Schema.parseJson(Schema.Struct({ role: Schema.String, createdAt: Schema.optional(Schema.String) }))

/**
 * The UTC dates (`YYYY-MM-DD`) of each turn's messages, read from the transcript's lines (turns
 * cut as `Transcript.turnsOf` cuts them); none for messages without a `createdAt`.
 */
const turnDates = (path: string): ReadonlyArray<ReadonlySet<string>> => {
  const turns: Array<Set<string>> = []
  let seenUser = false
  for (const raw of readFileSync(path, "utf8").split("\n")) {
    if (raw.trim().length === 0) continue
    const line = Schema.decodeUnknownSync(Line)(raw)
    if (line.role === "user" && seenUser) turns.push(new Set())
    if (line.role === "user") seenUser = true
    if (turns.length === 0) turns.push(new Set())
    if (line.createdAt !== undefined) turns[turns.length - 1]?.add(new Date(line.createdAt).toISOString().slice(0, 10))
  }
  return turns
}

const isDate = /^\d{4}-\d{2}-\d{2}$/

/**
 * Whether two search terms are one word to a reader: equal, or, both of four letters or more,
 * starting alike over the shorter one's length up to six (`weigh` and `weighed`, `recommend` and
 * `recommendation`; not `interview` and `international`).
 */
const sameWord = (a: string, b: string): boolean => {
  if (a === b) return true
  if (a.length < 4 || b.length < 4 || !/^[a-z]+$/.test(a) || !/^[a-z]+$/.test(b)) return false
  const reach = Math.min(a.length, b.length, 6)
  return a.slice(0, reach) === b.slice(0, reach)
}

describe("questions files", () => {
  it("every questions file in examples/ is checked", () => {
    assert.includeMembers(files.map((path) => path.split("/").pop()), [
      "conversation.questions.json",
      "offsite.questions.json",
      "trip.questions.json"
    ])
  })

  for (const path of files) {
    // The real clock: a transcript's `createdAt` may not lie ahead of it, and the test clock starts in 1970.
    it.live(`${path.split("/").pop()}: each answer stated where it says, then unsaid for 60 turns or more`, () =>
      Effect.gen(function*() {
        const file = yield* Eval.readQuestions(path)
        if (file.questions.some((q) => q.conversation !== undefined)) {
          // Asked in new conversations of the transcript's user: the checker of such files says
          // whether each answer is where it says, in a conversation before the question's.
          const checked = spawnSync(process.execPath, ["scripts/check-questions.mjs", path], { encoding: "utf8" })
          assert.strictEqual(checked.status, 0, checked.stdout + checked.stderr)
          assert.isAtLeast(file.questions.length, 60)
          return
        }
        const chunks = Transcript.turnsOf(yield* Transcript.read(file.transcript))
        const turns = chunks.map(said)
        const dates = turnDates(file.transcript)
        // A conversation's own questions file holds at least 36; a file of hard kinds beside it, at least 12.
        assert.isAtLeast(file.questions.length, path.endsWith(".hard.questions.json") ? 12 : 36)
        assert.strictEqual(new Set(file.questions.map((q) => q.id)).size, file.questions.length, "ids are unique")
        for (const q of file.questions) {
          assert.isAtLeast(q.askedAfterTurn - q.lastStatedTurn, 60, q.id)
          assert.isAtMost(q.askedAfterTurn, turns.length, q.id)
          assert.isAtMost(q.statedAtTurn, q.lastStatedTurn, q.id)
          const first = turns[q.statedAtTurn - 1] ?? ""
          const last = turns[q.lastStatedTurn - 1] ?? ""
          if (q.kind === "multi-turn") {
            // Two statements far apart, each needed: one answer only the first turn says, one only the last.
            assert.isAtLeast(q.answers.length, 2, q.id)
            assert.isAtLeast(q.lastStatedTurn - q.statedAtTurn, farApart, q.id)
            for (const answer of q.answers) {
              assert.isTrue(first.includes(answer) || last.includes(answer), `${q.id}: "${answer}" in neither turn`)
            }
            assert.isTrue(q.answers.some((a) => first.includes(a) && !last.includes(a)), `${q.id}: first turn needed`)
            assert.isTrue(q.answers.some((a) => last.includes(a) && !first.includes(a)), `${q.id}: last turn needed`)
          } else {
            for (const answer of q.answers) {
              if (q.kind === "when" && isDate.test(answer) && !first.includes(answer)) {
                // The date of the session: the turn's, and that of no turn in the 60 before the question.
                assert.isTrue(
                  dates[q.statedAtTurn - 1]?.has(answer),
                  `${q.id}: turn ${q.statedAtTurn} is not of ${answer}`
                )
                const lastOfDay = dates.reduce((at, days, i) => (days.has(answer) ? i + 1 : at), 0)
                assert.isAtLeast(q.askedAfterTurn - lastOfDay, 60, `${q.id}: turn ${lastOfDay} is of ${answer} too`)
              } else {
                assert.include(first, answer, `${q.id} at turn ${q.statedAtTurn}`)
              }
            }
          }
          for (const answer of q.answers) {
            const again = turns.slice(q.lastStatedTurn, q.askedAfterTurn).findIndex((text) => text.includes(answer))
            assert.strictEqual(again, -1, `${q.id}: "${answer}" said again at turn ${q.lastStatedTurn + again + 1}`)
          }
          if (q.kind === "paraphrase") {
            // No word of the question finds the answer's turn: the search terms (stemmed, stop words out) are disjoint.
            const asked = queryTerms(q.question)
            for (const turn of Eval.answerTurns(q)) {
              const terms = [...documentTerms(searched(chunks[turn - 1] ?? [])).keys()]
              const shared = asked.filter((term) => terms.some((other) => sameWord(term, other)))
              assert.deepStrictEqual(shared, [], `${q.id}: shares ${shared.join(", ")} with turn ${turn}`)
            }
          }
        }
      }).pipe(Effect.provide(NodeContext.layer)))
  }
})
