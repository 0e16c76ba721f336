/**
 * `eval`'s recall@k on a conversation small enough to know the search's ranking by hand: the
 * command line, in this process, prints it beside the answers in context and writes it in its
 * JSON, overall and by kind of question.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { cli, tempDir } from "./fixtures/cli.js"

const turn = (user: string, assistant: string) => [
  JSON.stringify({ role: "user", content: user }),
  JSON.stringify({ role: "assistant", content: assistant })
]

/**
 * Turn 1 holds the locker code; turns 2 to 4 say "parcel" often in short messages, turn 5 once in
 * a long one (the rope's length), so a search for the parcel ranks turn 5 fourth; turn 6 holds the
 * harness size and turn 7 the belay partner; nothing says "padlock" or "combination".
 */
const transcript = [
  ...turn("The locker code for the climbing gym is 4471.", "Got it, 4471 for the locker."),
  ...turn(
    "I left a parcel with the neighbour, the parcel has my boots.",
    "The parcel is safe with the neighbour then."
  ),
  ...turn("Another parcel came today, a second parcel with chalk.", "Two parcels now."),
  ...turn("The parcel from the shop had a parcel slip inside.", "A parcel slip, noted."),
  ...turn(
    "Long day. I went to the wall after work, did three easy routes and one hard one, talked to the staff about " +
      "the new bouldering area opening next month, checked the noticeboard for the winter league, bought a coffee, " +
      "and on the way home I finally measured the old rope: it is 60 metres, still in good shape, though the " +
      "sheath looks a little worn near one end. Oh, and a parcel arrived.",
    "Sounds like a full evening. A 60 metre rope covers most routes at the crag."
  ),
  ...turn("My harness size is medium.", "Medium harness, noted."),
  ...turn("My belay partner is Ines.", "Ines it is."),
  ...turn("Thanks for keeping track of all this!", "Any time.")
].join("\n")

const question = (
  id: string,
  text: string,
  answers: ReadonlyArray<string>,
  stated: number,
  last: number,
  kind?: string
) => ({
  id,
  factKey: null,
  question: text,
  answers,
  statedAtTurn: stated,
  lastStatedTurn: last,
  supersededAtTurn: null,
  askedAfterTurn: 8,
  ...(kind === undefined ? {} : { kind })
})

const questions = {
  transcript: "climbing.jsonl",
  questions: [
    question("locker", "What is my locker code?", ["4471"], 1, 1),
    question("rope", "Anything about the parcel?", ["60 metres"], 5, 5),
    question("padlock", "Which padlock combination did I pick?", ["4471"], 1, 1, "paraphrase"),
    question("gear", "What harness size, and which belay partner?", ["medium", "Ines"], 6, 7, "multi-turn")
  ]
}

const AtK = Schema.Array(Schema.Struct({ k: Schema.Int, hits: Schema.Int, allTurns: Schema.Int }))

const EvalJson = Schema.parseJson(Schema.Struct({
  results: Schema.Array(Schema.Struct({
    label: Schema.String,
    recall: Schema.Boolean,
    questions: Schema.Array(Schema.Struct({
      id: Schema.String,
      kind: Schema.NullOr(Schema.String),
      answerRanks: Schema.NullOr(Schema.Array(Schema.NullOr(Schema.Int))),
      bm25: Schema.NullOr(Schema.Boolean)
    })),
    bm25: Schema.NullOr(Schema.Int),
    recallAtK: Schema.NullOr(Schema.Array(Schema.Struct({ questions: Schema.String, asked: Schema.Int, atK: AtK })))
  }))
}))

describe("CLI: eval's recall@k", () => {
  it.scoped("ranks each question's answer turns in the search's top 10 turns, overall and by kind", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFileSync(join(dir, "climbing.jsonl"), `${transcript}\n`)
      const path = join(dir, "climbing.questions.json")
      writeFileSync(path, JSON.stringify(questions))
      const args = ["eval", path, "--strategies", "summarization", "--store", "memory"]

      const text = yield* cli(args)
      assert.strictEqual(text.code, 0, text.stderr)
      const row = (label: string) => text.stdout.split("\n").find((line) => line.startsWith(label))?.split(/ {2,}/)
      // Without recall there is no search: the first column has none.
      assert.deepStrictEqual(row("search recall@1/3/5/10"), [
        "search recall@1/3/5/10",
        "-",
        "2/2/3/3 of 4 (50/50/75/75 %)"
      ])
      // Answers in context by kind; then recall@k by kind.
      assert.deepStrictEqual(row("  paraphrase questions")?.slice(-2), ["1/1 (100 %)", "1/1 (100 %)"])
      assert.deepStrictEqual(row("  of paraphrase questions")?.slice(-1), ["0/0/0/0 of 1 (0/0/0/0 %)"])
      assert.deepStrictEqual(row("  of multi-turn, both turns")?.slice(-1), ["0/1/1/1 of 1 (0/100/100/100 %)"])
      assert.deepStrictEqual(row("  of plain questions")?.slice(-1), ["1/1/2/2 of 2 (50/50/100/100 %)"])

      const json = yield* cli([...args, "--json"])
      assert.strictEqual(json.code, 0, json.stderr)
      const report = Schema.decodeUnknownSync(EvalJson)(json.stdout)
      const [off, on] = report.results
      assert.strictEqual(off?.recall, false)
      assert.isNull(off?.recallAtK)
      assert.deepStrictEqual(off?.questions.map((q) => q.answerRanks), [null, null, null, null])
      assert.strictEqual(on?.label, "summarization + recall")
      const ranks = on?.questions.map((q) => [q.id, q.kind, q.answerRanks])
      // The parcel turns 2 to 4 outrank turn 5; harness and partner take the first two places.
      assert.deepStrictEqual(ranks?.slice(0, 3), [
        ["locker", null, [1]],
        ["rope", null, [4]],
        ["padlock", "paraphrase", [null]]
      ])
      assert.sameMembers([...(on?.questions[3]?.answerRanks ?? [])], [1, 2])
      const atK = (group: string) => on?.recallAtK?.find((g) => g.questions === group)?.atK
      assert.deepStrictEqual(atK("all")?.map((at) => [at.k, at.hits, at.allTurns]), [
        [1, 2, 1],
        [3, 2, 2],
        [5, 3, 3],
        [10, 3, 3]
      ])
      assert.deepStrictEqual(on?.recallAtK?.map((g) => [g.questions, g.asked]), [
        ["all", 4],
        ["paraphrase", 1],
        ["multi-turn", 1],
        ["plain", 2]
      ])
      // The BM25 baseline runs with recall only. The whole transcript fits its budget, so it holds
      // every answer whose turns share a word with the question: all but the padlock's.
      assert.isNull(off?.bm25)
      assert.deepStrictEqual(on?.questions.map((q) => q.bm25), [true, true, false, true])
      assert.strictEqual(on?.bm25, 3)
    }))
})
