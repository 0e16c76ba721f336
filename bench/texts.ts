/**
 * Generated, deterministic texts for the benchmarks: short chat messages, a long conversation of
 * varied turns, and a corpus of about one megabyte for the token counters.
 */

/** A short chat message (about 100 characters), distinct for each `i`. */
export const text = (i: number): string =>
  `Message ${i}: the delivery for order ORD-2024-${10000 + i} moves to slot ${i % 7}; please confirm the dock.`

/** Messages `from` .. `from + count - 1`, alternating user and assistant. */
export const batch = (from: number, count: number) =>
  Array.from({ length: count }, (_, k) => ({
    role: (from + k) % 2 === 0 ? "user" as const : "assistant" as const,
    content: text(from + k)
  }))

const vocabulary = (
  "the delivery order warehouse dock slot invoice customer carrier pallet route schedule refund " +
  "address window driver tracking weather delay priority contract supplier quantity discount " +
  "we should confirm tomorrow morning because it moved again after your last message about"
).split(" ")

/** A deterministic pseudo-random integer in [0, n) for the seed parts given (a 32-bit hash of them). */
export const pick = (n: number, ...seed: ReadonlyArray<number>): number => {
  let h = 0x811c9dc5
  for (const part of seed) {
    h = Math.imul(h ^ (part | 0), 0x01000193)
    h ^= h >>> 15
    h = Math.imul(h, 0x2c1b3c6d)
    h ^= h >>> 12
  }
  return (h >>> 0) % n
}

const sentence = (seed: number, words: number): string =>
  Array.from({ length: words }, (_, k) => vocabulary[pick(vocabulary.length, seed, k)] ?? "and").join(" ")

/** Turn `i` of a generated conversation: a user message of 15-60 words, an answer of 30-180; distinct for each `i`. */
export const generatedTurn = (i: number) => [
  { role: "user" as const, content: `Turn ${i}: ${sentence(2 * i, 15 + pick(46, 2 * i))}?` },
  { role: "assistant" as const, content: `Answer ${i}: ${sentence(2 * i + 1, 30 + pick(151, 2 * i + 1))}.` }
]

const snippets = [
  (i: number) =>
    `Here is the config for job ${i}:\n\`\`\`ts\nconst retry = Schedule.exponential("${
      50 + pick(400, i)
    } millis").pipe(Schedule.jittered)\nexport const run = Effect.retry(task, { schedule: retry, times: ${
      pick(9, i)
    } })\n\`\`\``,
  (i: number) =>
    `{"order":"ORD-${100000 + i}","items":[{"sku":"SKU-${pick(9999, i)}","qty":${pick(40, i)}},{"sku":"SKU-${
      pick(9999, i, 1)
    }","qty":${pick(40, i, 1)}}],"total":${(pick(100000, i) / 100).toFixed(2)},"currency":"EUR"}`,
  (i: number) =>
    `Livraison n°${i} : le transporteur arrive à ${pick(24, i)}h${String(pick(60, i, 7)).padStart(2, "0")}, ` +
    `配送は明日の午前中です。Danke für die Geduld! 🚚📦 Réf. ${i}.`
]

const syllables = (
  "ka re mi to lan ver sho pre dis con tion ment ab ex in ter ro ba li qua " +
  "stor nel fi gu mo der pa san tri vo lu ne ci ho pe ra ze wo dy ul"
).split(" ")

const commonWords = (
  "the a to of and in is it you that for on with we this be are have not can will your at as " +
  "but from or by our if they so what all about there when would which their more could"
).split(" ")

/**
 * Prose of `words` words: three common words in four, the rest made of one to three syllables
 * (tens of thousands of distinct words), so that a tokenizer's per-word cache does not make
 * counting look cheaper than on real text.
 */
const prose = (seed: number, words: number): string =>
  Array.from({ length: words }, (_, k) => {
    if (pick(4, seed, k) !== 0) return commonWords[pick(commonWords.length, seed, k, 1)] ?? "the"
    return Array.from({ length: 1 + pick(3, seed, k, 2) }, (_, j) =>
      syllables[pick(syllables.length, seed, k, 3, j)] ?? "ka")
      .join("")
  }).join(" ")

/**
 * About `bytes` of UTF-8 text as chat messages: mostly prose with a large vocabulary, with code,
 * JSON and non-English lines (every fourth message), as an agent's history holds.
 */
export const corpus = (bytes: number): ReadonlyArray<string> => {
  const encoder = new TextEncoder()
  const messages: Array<string> = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const snippet = snippets[pick(snippets.length, i)]
    const message = i % 4 === 3 && snippet !== undefined
      ? snippet(i)
      : `${prose(i, 20 + pick(120, i))}${i % 2 === 0 ? "?" : "."}`
    messages.push(message)
    size += encoder.encode(message).length
  }
  return messages
}

/** The UTF-8 size of `messages`, in bytes. */
export const utf8Bytes = (messages: ReadonlyArray<string>): number => {
  const encoder = new TextEncoder()
  return messages.reduce((n, m) => n + encoder.encode(m).length, 0)
}
