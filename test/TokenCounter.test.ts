/**
 * The token counters: the laws every counter keeps, the exact o200k counts of ordinary text
 * (unchanged from plain gpt-tokenizer 2.9), and pathological text counted in linear time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { MessageOverhead } from "../src/domain/internal/messageLimits.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import type { TokenCounter } from "../src/services/TokenCounter.js"

const counters: ReadonlyArray<readonly [string, TokenCounter.Service]> = [
  ["approximate", ApproximateTokenCounter.make],
  ["exact o200k", ExactTokenCounter.fromTokenizer(ExactTokenCounter.o200kTokenizer, "o200k_base")],
  ["exact o200k (make)", ExactTokenCounter.make]
]

const texts = fc.oneof(fc.string({ maxLength: 300 }), fc.fullUnicodeString({ maxLength: 120 }))

describe.each(counters)("TokenCounter laws: %s", (_, counter) => {
  it.effect("counts the empty text as 0", () => Effect.map(counter.count(""), (n) => assert.strictEqual(n, 0)))

  it.effect.prop("truncate returns the longest fitting prefix, or the text when it fits", [
    texts,
    fc.integer({ min: 0, max: 60 })
  ], ([text, max]) =>
    Effect.gen(function*() {
      const cut = yield* counter.truncate(text, max)
      assert.isTrue(text.startsWith(cut))
      assert.isAtMost(yield* counter.count(cut), max)
      if ((yield* counter.count(text)) <= max) assert.strictEqual(cut, text)
      // Never half a surrogate pair.
      assert.notMatch(cut, /[\uD800-\uDBFF]$/)
    }), { fastCheck: { numRuns: 60 } })

  it.effect("countMessage adds the tool calls and the per-message overhead", () =>
    Effect.gen(function*() {
      const content = "Check the stock for R-290."
      const toolCalls = [{ id: "call_1", name: "check_inventory", params: { sku: "R-290" } }]
      const plain = yield* counter.countMessage({ content })
      assert.strictEqual(plain, (yield* counter.count(content)) + MessageOverhead)
      const withCalls = yield* counter.countMessage({ content, metadata: { toolCalls } })
      assert.strictEqual(withCalls, plain + (yield* counter.count(JSON.stringify(toolCalls))))
    }))
})

/**
 * Ordinary text and its o200k count as plain gpt-tokenizer 2.9.0 `encode` gave it before the
 * counter became linear (computed once and written down: a regression test, not a tautology).
 * Newer gpt-tokenizer majors split o200k text with o200k's own pattern and give other counts
 * for the contractions, Hindi and Thai rows; an upgrade is a deliberate change of these numbers.
 */
const ordinary: ReadonlyArray<readonly [name: string, text: string, tokens: number]> = [
  [
    "English prose",
    "The warehouse confirmed the delivery for Thursday morning, but the carrier moved the slot again. We should ask the customer whether the new window still works before we reschedule the driver.",
    35
  ],
  [
    "English with contractions and quotes",
    "I'm sure they'll say it's fine — don't worry! She said: \"We've already shipped 3 pallets; you'd better check.\" (It wasn't.)",
    36
  ],
  [
    "TypeScript",
    "export const retry = <A, E>(effect: Effect.Effect<A, E>, times: number) =>\n  Effect.retry(effect, Schedule.recurs(times).pipe(\n    Schedule.intersect(Schedule.exponential(\"100 millis\"))\n  ))\n\nif (count >= 10 && !done) {\n  console.log(`retrying ${count}/${max}...`)\n}\n",
    74
  ],
  [
    "Python",
    "def fibonacci(n: int) -> list[int]:\n    \"\"\"Return the first n Fibonacci numbers.\"\"\"\n    a, b = 0, 1\n    out = []\n    for _ in range(n):\n        out.append(a)\n        a, b = b, a + b\n    return out\n\n\nprint(fibonacci(10))  # [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]\n",
    99
  ],
  [
    "JSON, pretty",
    "{\n  \"id\": \"ORD-2024-88417\",\n  \"customer\": { \"name\": \"Ada Lovelace\", \"email\": \"ada@example.com\" },\n  \"items\": [\n    { \"sku\": \"R-290\", \"qty\": 12, \"price\": 1040.04 },\n    { \"sku\": \"X-7\", \"qty\": 1, \"price\": null }\n  ],\n  \"paid\": true\n}",
    97
  ],
  [
    "JSON, minified",
    "{\"toolCalls\":[{\"id\":\"call_1\",\"name\":\"check_inventory\",\"params\":{\"sku\":\"R-290\",\"warehouse\":\"LYS-2\"}}],\"ok\":false,\"retries\":[1,2,4,8,16]}",
    49
  ],
  [
    "numbers",
    "3.14159 2,718,281 1e-9 0x1F 6.022e23 -42 2024-06-30T12:34:56Z +1 (555) 010-9999 €12,480.50 99.9% 1234567890123",
    69
  ],
  [
    "markdown",
    "# Release notes\n\n| Version | Date       | Notes            |\n|---------|------------|------------------|\n| 0.1.0   | 2024-07-01 | First release    |\n\n- [x] sliding window\n- [ ] **hierarchical** memory, see [docs](https://example.com/docs?page=2#memory)\n",
    73
  ],
  [
    "URL, path, email, shell",
    "curl -sS -H 'Authorization: Bearer $TOKEN' https://api.example.com/v1/orders/88417?expand=items > /tmp/out.json && jq '.items[] | .sku' /tmp/out.json # ops@example.org",
    51
  ],
  [
    "SQL",
    "SELECT c.id, count(*) AS n\nFROM conversations c\nJOIN messages m ON m.conversation_id = c.id\nWHERE m.created_at > now() - interval '7 days'\nGROUP BY c.id\nORDER BY n DESC\nLIMIT 20;",
    52
  ],
  [
    "identifiers",
    "getContextByHistoryLength HTTPServerError parseJSONResponse snake_case_name SCREAMING_CASE kebab-case-name iPhone15Pro",
    26
  ],
  ["whitespace", "a\n\n\tb  c   \r\n d    \n\n\n    indented\t\ttabs   \n", 15],
  [
    "French",
    "Le déménagement est prévu pour jeudi ; l'équipe a déjà réservé le créneau « 14 h – 16 h » à la déchetterie.",
    31
  ],
  ["German", "Die Donaudampfschifffahrtsgesellschaftskapitänsmütze liegt übermorgen im Großraumbüro.", 26],
  ["Russian", "Пожалуйста, подтвердите доставку заказа до пятницы: склад закрывается в 18:00.", 22],
  ["Greek", "Η παράδοση της παραγγελίας μετατέθηκε για την Πέμπτη το πρωί.", 21],
  ["Arabic", "يرجى تأكيد موعد التسليم قبل يوم الجمعة، فالمستودع يغلق في الساعة السادسة.", 24],
  ["Hebrew", "שלום, ההזמנה שלך נשלחה היום ותגיע בעוד שלושה ימים.", 17],
  ["Hindi", "कृपया शुक्रवार से पहले डिलीवरी की पुष्टि करें, गोदाम शाम छह बजे बंद होता है।", 44],
  ["Chinese", "请在星期五之前确认送货时间，仓库每天下午六点关门。谢谢！", 22],
  ["Japanese", "配送日時を金曜日までにご確認ください。倉庫は午後六時に閉まります。", 23],
  ["Korean", "금요일 전까지 배송 일정을 확인해 주세요. 창고는 오후 여섯 시에 문을 닫습니다.", 26],
  ["Thai", "กรุณายืนยันวันจัดส่งก่อนวันศุกร์ คลังสินค้าปิดเวลาหกโมงเย็น", 33],
  ["emoji", "Shipped! 🚚📦 Thanks 🙏🏽 — team 👩\u200d💻👨\u200d👩\u200d👧 🇫🇷🇯🇵 ✅", 36],
  [
    "base64 and hashes",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    103
  ]
]

/** `n` characters drawn from `alphabet` by a fixed linear congruential generator. */
const drawn = (alphabet: string, n: number, seed: number): string => {
  const symbols = Array.from(alphabet)
  let state = seed >>> 0
  let text = ""
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    // The high bits: the low ones of such a generator repeat after a few thousand draws.
    text += symbols[Math.floor((state / 2 ** 32) * symbols.length)] ?? ""
  }
  return text
}

const plainText = { disallowedSpecial: new Set<string>() }

// Runs without a split point are what made plain gpt-tokenizer quadratic; mixed with ordinary
// text, they take the counter's other path (pieces cut out of the text and merged apart).
const alphabets = [
  "a",
  "ab",
  "abcdefghijklmnopqrstuvwxyz",
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
  "=-_*#",
  " ",
  " \n\t",
  "\t ",
  "éàüß",
  "日本語中文字",
  "अआइक्षा",
  "กขคงจัิ",
  "😀🇫🇷👩\u200d💻",
  "\ufeffab ",
  "абвгд",
  "The quick brown fox. ",
  "0123456789",
  "a1+/="
]

const mixedText = fc.array(
  fc.record({
    alphabet: fc.constantFrom(...alphabets),
    length: fc.integer({ min: 1, max: 1500 }),
    seed: fc.nat()
  }),
  { minLength: 1, maxLength: 4 }
).map((runs) => runs.map((run) => drawn(run.alphabet, run.length, run.seed)).join(""))
  // Up to 8,192 bytes, no piece is cut in chunks: the tokens must be plain gpt-tokenizer's.
  .filter((text) => new TextEncoder().encode(text).length <= 8192)

describe("ExactTokenCounter", () => {
  const tokenizerCounter = ExactTokenCounter.fromTokenizer(ExactTokenCounter.o200kTokenizer, "o200k_base")

  it.effect("counts exactly what the o200k encoding counts", () =>
    Effect.gen(function*() {
      for (const text of ["Hello world, this is a test.", "ORD-2024-88417 costs €12,480.50", "שלום 🧊"]) {
        assert.strictEqual(yield* tokenizerCounter.count(text), encode(text).length)
        assert.strictEqual(yield* ExactTokenCounter.make.count(text), encode(text).length)
      }
    }))

  it.effect("counts ordinary text as plain gpt-tokenizer 2.9.0 did", () =>
    Effect.gen(function*() {
      for (const [name, text, tokens] of ordinary) {
        assert.strictEqual(yield* ExactTokenCounter.make.count(text), tokens, name)
        assert.strictEqual(yield* tokenizerCounter.count(text), tokens, name)
      }
    }))

  it.effect.prop(
    "encodes text with long runs token for token as plain gpt-tokenizer",
    [mixedText],
    ([text]) =>
      Effect.gen(function*() {
        const expected = encode(text, plainText)
        assert.deepStrictEqual(yield* ExactTokenCounter.o200kTokenizer.tokenize(text), expected)
        assert.strictEqual(yield* ExactTokenCounter.make.count(text), expected.length)
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect("keeps the pieces of the text around a long run", () =>
    Effect.gen(function*() {
      // Whitespace before a long piece: inside the text, its last character is a piece of its own.
      for (
        const text of [
          `x \t\t${"=".repeat(300)} y`,
          `ok\n \t${"a".repeat(300)}`,
          `ok\t\n${"a".repeat(300)}`,
          `${" ".repeat(300)}${"b".repeat(300)}  \n`,
          `\ufeff${"a".repeat(300)}\ufeff\ufeffb`,
          `x\ud800${"a".repeat(300)}`
        ]
      ) {
        assert.deepStrictEqual(yield* ExactTokenCounter.o200kTokenizer.tokenize(text), encode(text, plainText))
      }
    }))

  it.effect("counts text that looks like a control token as the characters it is", () =>
    Effect.gen(function*() {
      const text = "Reply with <|endoftext|> when done."
      assert.strictEqual(yield* ExactTokenCounter.make.count(text), encode(text, plainText).length)
      assert.strictEqual(yield* tokenizerCounter.count(text), encode(text, plainText).length)
    }))

  // No timing here: speed is measured by `npm run bench` (section tokens). These check that the
  // count comes back, and how close it is where plain gpt-tokenizer cannot be run on the text.
  it.effect("counts a megabyte of one repeated character exactly", () =>
    Effect.gen(function*() {
      // "aaaaaaaa" is one token and every run of "a" merges into such tokens from the left:
      // plain gpt-tokenizer gives 8,000 characters 1,000 tokens; a megabyte is 125 times that.
      assert.strictEqual(encode("a".repeat(8000)).length, 1000)
      assert.strictEqual(yield* ExactTokenCounter.make.count("a".repeat(1_000_000)), 125_000)
    }), 60_000)

  it.effect("counts random base64 as plain gpt-tokenizer does", () =>
    Effect.gen(function*() {
      // Digits, "+" and "/" split base64 into short pieces, which plain gpt-tokenizer handles
      // in linear time too (if slowly: every piece is new), so here it gives the reference.
      const text = drawn("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 200_000, 3)
      assert.strictEqual(yield* ExactTokenCounter.make.count(text), encode(text).length)
    }), 60_000)

  it.effect(
    "counts a megabyte of letters without whitespace within 1% of its exact count",
    () =>
      Effect.gen(function*() {
        // One piece of a million letters: plain gpt-tokenizer would take about half an hour on it.
        // The reference is its exact count of the text cut every 500 characters. A cut moves the
        // count by a token or two, so the 2,000 cuts of the reference and the counter's own 123
        // (every 8,192 bytes) keep the two within 1% of 520,000 tokens (0.06% when written).
        const text = drawn("abcdefghijklmnopqrstuvwxyz", 1_000_000, 5)
        let reference = 0
        for (let i = 0; i < text.length; i += 500) reference += encode(text.slice(i, i + 500)).length
        const counted = yield* ExactTokenCounter.make.count(text)
        assert.isAtMost(Math.abs(counted - reference) / reference, 0.01)
      }),
    60_000
  )
})

describe("ApproximateTokenCounter", () => {
  it.effect("counts a quarter of the characters, rounded up", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ApproximateTokenCounter.make.count("abcd"), 1)
      assert.strictEqual(yield* ApproximateTokenCounter.make.count("abcde"), 2)
    }))
})
