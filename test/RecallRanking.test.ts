/**
 * How recall ranks the turns its search finds: the turn that answers a turn ending on a question
 * comes with it, a question asking when prefers the turns that state a date, and the frame of a
 * question about the conversation ("when did I tell you") is not searched for, and a turn that
 * holds the query's words in the query's order comes before one that only holds them apart.
 */
import { assert, describe, it } from "@effect/vitest"
import { Array, Effect } from "effect"
import type { NewMessage } from "../src/domain/Message.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import { asksWhen, withoutFrame } from "../src/strategies/internal/recall/ranking.js"
import { searchTurns } from "../src/strategies/Recall.js"
import { freshId, newMessage } from "./fixtures/messages.js"

/** Turns of chatter that share no word with the questions below. */
const chatter = (n: number): Array<NewMessage> =>
  Array.makeBy(n, (i) => [
    newMessage("user", `Morning note ${i}: the garden needs watering again.`),
    newMessage("assistant", `Right, the garden note ${i} is on the list.`)
  ]).flat()

/** The turns recall finds for `query` in a conversation of `messages`, as seq ranges. */
const recall = (messages: ReadonlyArray<NewMessage>, query: string, limit = 5) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.make
    const id = freshId("ranking")
    yield* store.repository.appendMessages(id, messages)
    const found = yield* searchTurns(store.repository, { index: store.index, conversationId: id }, {
      query,
      before: Number.MAX_SAFE_INTEGER,
      limit
    })
    return found.map((turn) => [turn.fromSeq, turn.toSeq])
  })

describe("recall ranking", () => {
  it.effect("a turn that ends on the assistant's question brings the turn that answers it, right after", () =>
    Effect.gen(function*() {
      const messages = [
        ...chatter(3),
        newMessage("user", "I did buy new running shoes after the gait analysis!"),
        newMessage("assistant", "Good call. Which ones did you get?"),
        newMessage("user", "Brooks Adrenaline. they're very blue"),
        newMessage("assistant", "Blue is the fastest colour."),
        ...chatter(3)
      ]
      // The answer (seqs 9-10) shares no word with the question; it comes after its question.
      assert.deepStrictEqual(yield* recall(messages, "Which running shoes did I buy after the gait analysis?"), [
        [7, 8],
        [9, 10]
      ])
    }))

  it.effect("a turn that does not leave its matter to the next one comes alone", () =>
    Effect.gen(function*() {
      const messages = [
        ...chatter(3),
        newMessage("user", "I did buy new running shoes after the gait analysis, Brooks Adrenaline."),
        newMessage("assistant", "Good call, they suit overpronation."),
        newMessage("user", "Also, the plumber comes on the fourth."),
        newMessage("assistant", "Noted."),
        ...chatter(3)
      ]
      assert.deepStrictEqual(yield* recall(messages, "Which running shoes did I buy after the gait analysis?"), [[
        7,
        8
      ]])
    }))

  it.effect("a question asking when prefers the turn that states a date; another question does not", () =>
    Effect.gen(function*() {
      const messages = [
        ...chatter(3),
        newMessage("user", "The design review for the park is on 19 February."),
        newMessage("assistant", "Good luck with it."),
        ...chatter(2),
        newMessage("user", "The design review for the park went well."),
        newMessage("assistant", "That is great news."),
        ...chatter(2)
      ]
      // Both turns match "design review park" alike; without a date the newer one ranks first.
      assert.deepStrictEqual((yield* recall(messages, "How was the design review for the park?"))[0], [13, 14])
      assert.deepStrictEqual((yield* recall(messages, "When was the design review for the park?"))[0], [7, 8])
      assert.deepStrictEqual(
        (yield* recall(messages, "Who was there, and on what date was the design review for the park?"))[0],
        [7, 8]
      )
    }))

  it.effect("the frame of a question about the conversation is not searched for", () =>
    Effect.gen(function*() {
      const messages = [
        ...chatter(2),
        newMessage("user", "I have met a greyhound called Biscuit at the rescue."),
        newMessage("assistant", "A greyhound! How lovely."),
        ...Array.makeBy(6, (i) => [
          newMessage("user", `Did I tell you about the first thing ${i} I mentioned?`),
          newMessage("assistant", `Tell me more, you first mentioned it ${i} times.`)
        ]).flat()
      ]
      assert.deepStrictEqual(
        (yield* recall(messages, "When did I first tell you about the greyhound Biscuit?"))[0],
        [5, 6]
      )
    }))

  it.effect("a turn that holds the query's words side by side comes before one that holds them apart", () =>
    Effect.gen(function*() {
      const apart = [
        newMessage("user", "Repair the boiler."),
        newMessage("assistant", "Noted.")
      ]
      const together = [
        newMessage("user", "The boiler repair is done."),
        newMessage("assistant", "Noted.")
      ]
      // Either order in the conversation: the turn with "boiler repair" as said comes first.
      const query = "What did the boiler repair cost?"
      assert.deepStrictEqual(yield* recall([...chatter(3), ...apart, ...together, ...chatter(3)], query, 1), [[9, 10]])
      assert.deepStrictEqual(yield* recall([...chatter(3), ...together, ...apart, ...chatter(3)], query, 1), [[7, 8]])
    }))

  it("which questions ask when, and what a question's frame is", () => {
    assert.isTrue(asksWhen("When was the Dovedale Half?"))
    assert.isTrue(asksWhen("Until when can the Munich hotel be cancelled for free?"))
    assert.isTrue(asksWhen("On what date did my manager approve the Milan hotel?"))
    assert.isTrue(asksWhen("Who is the lead driver, and when did the coaches leave?"))
    assert.isFalse(asksWhen("When did I tell you I'd met Biscuit?"))
    assert.isFalse(asksWhen("What was the car rental total when first booked?"))
    assert.strictEqual(withoutFrame("When did I first tell you about Biscuit?").replace(/\s+/g, " "), "When Biscuit?")
    assert.strictEqual(
      withoutFrame("When did I report back on my car shopping?").replace(/\s+/g, " "),
      "When my car shopping?"
    )
    assert.strictEqual(withoutFrame("Where is the booth?"), "Where is the booth?")
  })
})
