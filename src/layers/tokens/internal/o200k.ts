/**
 * The o200k encoding in time linear in the text. Ordinary text goes to gpt-tokenizer; long
 * pieces, which make it quadratic, get a heap-ordered byte-pair merge over bounded chunks.
 */
import bpeRanks from "gpt-tokenizer/bpeRanks/o200k_base"
import { countTokens, encode as encodeOrdinary } from "gpt-tokenizer/encoding/o200k_base"
// The pattern gpt-tokenizer 2.9 splits o200k text with; 3.x has o200k's own. Long pieces must be
// cut exactly where gpt-tokenizer cuts them. On an upgrade, import that version's o200k regex:
// the tests comparing counts with `encode` fail until this matches.
import { CL_AND_O_TOKEN_SPLIT_PATTERN as splitPattern } from "gpt-tokenizer/encodingParams/constants"

/**
 * Pieces longer than this many UTF-16 code units are merged here. gpt-tokenizer's merge costs the
 * square of a piece's length. It is above the longest o200k token (128 bytes), so a long piece is
 * never a token by itself.
 */
const longPiece = 128

/**
 * Long pieces are merged in chunks of at most this many bytes, to bound the cost per byte. A piece
 * up to this length is encoded exactly. A longer one, only found in machine-made text, gets the
 * sum of its chunks' encodings: off by a few tokens per chunk, around the cuts.
 */
const chunkBytes = 8192

// Text is never control tokens: `<|endoftext|>` in a message counts as its characters, and
// gpt-tokenizer does not throw.
const plainText = { disallowedSpecial: new Set<string>() }

// ---------------------------------------------------------------------------------------------
// Rank lookup by bytes
// ---------------------------------------------------------------------------------------------

/** UTF-8 validity as gpt-tokenizer checks it: no overlongs, surrogates or values above U+10FFFF. */
const isValidUtf8 = (bytes: Uint8Array, from: number, to: number): boolean => {
  let i = from
  while (i < to) {
    const first = bytes[i] ?? 0
    if (first < 0x80) {
      i++
      continue
    }
    let length: number
    let point: number
    if ((first & 0xe0) === 0xc0) {
      if (first <= 0xc1) return false
      length = 2
      point = first & 0x1f
    } else if ((first & 0xf0) === 0xe0) {
      length = 3
      point = first & 0x0f
    } else if ((first & 0xf8) === 0xf0) {
      if (first > 0xf4) return false
      length = 4
      point = first & 0x07
    } else {
      return false
    }
    if (i + length > to) return false
    for (let j = 1; j < length; j++) {
      const next = bytes[i + j] ?? 0
      if ((next & 0xc0) !== 0x80) return false
      point = (point << 6) | (next & 0x3f)
    }
    if (
      (length === 3 && point < 0x800) || (length === 4 && point < 0x10000) ||
      (point >= 0xd800 && point <= 0xdfff) || point > 0x10ffff
    ) return false
    i += length
  }
  return true
}

/**
 * The o200k ranks in an open-addressing table keyed by bytes, so a lookup allocates nothing. It
 * answers as gpt-tokenizer's lookup does. Tokens stored as bytes are found only when those bytes
 * are not valid UTF-8. A key that starts with a byte order mark is looked up without it, as
 * gpt-tokenizer's `TextDecoder` drops it.
 */
interface RankTable {
  readonly bytes: Uint8Array
  /** Where each rank's bytes start in `bytes`; one more entry than ranks. */
  readonly starts: Int32Array
  /** rank + 1 per slot, 0 when empty. */
  readonly slots: Int32Array
  readonly mask: number
  readonly longest: number
}

const hash = (bytes: Uint8Array, from: number, to: number): number => {
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) h = Math.imul(h ^ (bytes[i] ?? 0), 0x01000193)
  return h >>> 0
}

/** Whether `a[aFrom, aFrom + length)` and `b[bFrom, bFrom + length)` hold the same bytes. */
const sameBytes = (a: Uint8Array, aFrom: number, b: Uint8Array, bFrom: number, length: number): boolean => {
  for (let i = 0; i < length; i++) {
    if (a[aFrom + i] !== b[bFrom + i]) return false
  }
  return true
}

const find = (table: RankTable, key: Uint8Array, from: number, to: number): number => {
  const length = to - from
  if (length === 0 || length > table.longest) return -1
  let slot = hash(key, from, to) & table.mask
  while (true) {
    const entry = table.slots[slot] ?? 0
    if (entry === 0) return -1
    const start = table.starts[entry - 1] ?? 0
    if ((table.starts[entry] ?? 0) - start === length && sameBytes(table.bytes, start, key, from, length)) {
      return entry - 1
    }
    slot = (slot + 1) & table.mask
  }
}

const makeRankTable = (): RankTable => {
  const encoder = new TextEncoder()
  const count = bpeRanks.length
  let bytes = new Uint8Array(8 * count)
  const starts = new Int32Array(count + 1)
  let size = 1
  while (size < 2 * count) size *= 2
  const slots = new Int32Array(size)
  const mask = size - 1
  let used = 0
  let longest = 0
  const insert = (rank: number, from: number, to: number) => {
    let slot = hash(bytes, from, to) & mask
    while (true) {
      const entry = slots[slot] ?? 0
      if (entry === 0) break
      // A duplicate key keeps the last rank, as gpt-tokenizer's Map does.
      const start = starts[entry - 1] ?? 0
      if ((starts[entry] ?? 0) - start === to - from && sameBytes(bytes, start, bytes, from, to - from)) break
      slot = (slot + 1) & mask
    }
    slots[slot] = rank + 1
  }
  for (let rank = 0; rank < count; rank++) {
    const token = bpeRanks[rank] ?? ""
    if (bytes.length - used < 4 * 256) {
      const grown = new Uint8Array(2 * bytes.length)
      grown.set(bytes)
      bytes = grown
    }
    const from = used
    if (typeof token === "string") {
      let ascii = true
      for (let i = 0; i < token.length && ascii; i++) {
        const c = token.charCodeAt(i)
        if (c < 0x80) bytes[used + i] = c
        else ascii = false
      }
      used += ascii ? token.length : encoder.encodeInto(token, bytes.subarray(used)).written
      starts[rank + 1] = used
      insert(rank, from, used)
    } else {
      bytes.set(token, used)
      used += token.length
      starts[rank + 1] = used
      // gpt-tokenizer finds valid UTF-8 by its text only, never by bytes.
      if (!isValidUtf8(bytes, from, used)) insert(rank, from, used)
    }
    longest = Math.max(longest, used - from)
  }
  return { bytes: bytes.slice(0, used), starts, slots, mask, longest }
}

const table = makeRankTable()

/** The rank of `bytes[from, to)`, or -1 when it is not a token. */
const rankOf = (bytes: Uint8Array, from: number, to: number): number =>
  to - from >= 3 && bytes[from] === 0xef && bytes[from + 1] === 0xbb && bytes[from + 2] === 0xbf &&
    isValidUtf8(bytes, from, to)
    ? find(table, bytes, from + 3, to)
    : find(table, bytes, from, to)

// ---------------------------------------------------------------------------------------------
// Byte-pair merge in O(n log n) per chunk
// ---------------------------------------------------------------------------------------------

/** Work arrays for chunks of up to `capacity` bytes, reused across one piece's chunks. */
interface Merger {
  /** The end of the part that starts at each byte; read at part starts only. */
  readonly end: Int32Array
  /** The start of the part before the part that starts at each byte, -1 for the first. */
  readonly previous: Int32Array
  /** The rank of the pair that starts at each part start, -1 when there is none. */
  readonly pair: Int32Array
  /** A min-heap of `rank * chunkBytes + start`: the lowest rank first, then the leftmost. */
  readonly heap: Int32Array
}

const makeMerger = (capacity: number): Merger => ({
  end: new Int32Array(capacity),
  previous: new Int32Array(capacity),
  pair: new Int32Array(capacity),
  // Every merge pops one entry and pushes at most two, so the heap never holds 2 * capacity.
  heap: new Int32Array(2 * capacity)
})

/**
 * Merges `bytes[from, to)` as gpt-tokenizer's `bytePairMerge` does: the lowest-ranked pair first,
 * the leftmost among equals. Calls `onPart` with each part's bounds, in order, and returns the
 * number of parts. A popped entry is stale, and skipped, unless the pair at its position still
 * has its rank.
 */
const merge = (
  m: Merger,
  bytes: Uint8Array,
  from: number,
  to: number,
  onPart: ((from: number, to: number) => void) | undefined
): number => {
  const n = to - from
  const { end, heap, pair, previous } = m
  let size = 0
  const push = (key: number) => {
    let i = size++
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = heap[parent] ?? 0
      if (above <= key) break
      heap[i] = above
      i = parent
    }
    heap[i] = key
  }
  const pop = (): number => {
    const top = heap[0] ?? 0
    const last = heap[--size] ?? 0
    let i = 0
    while (true) {
      let child = 2 * i + 1
      if (child >= size) break
      const right = child + 1
      if (right < size && (heap[right] ?? 0) < (heap[child] ?? 0)) child = right
      const below = heap[child] ?? 0
      if (below >= last) break
      heap[i] = below
      i = child
    }
    heap[i] = last
    return top
  }
  const setPair = (start: number, stop: number) => {
    const rank = stop > n ? -1 : rankOf(bytes, from + start, from + stop)
    pair[start] = rank
    if (rank >= 0) push(rank * chunkBytes + start)
  }
  for (let i = 0; i < n; i++) {
    end[i] = i + 1
    previous[i] = i - 1
  }
  for (let i = 0; i < n; i++) setPair(i, i + 2)
  let parts = n
  while (size > 0) {
    const key = pop()
    const start = key % chunkBytes
    if (pair[start] !== (key - start) / chunkBytes) continue
    const middle = end[start] ?? n
    const after = end[middle] ?? n
    end[start] = after
    pair[middle] = -1
    parts--
    if (after < n) {
      previous[after] = start
      setPair(start, end[after] ?? n)
    } else {
      pair[start] = -1
    }
    const before = previous[start] ?? -1
    if (before >= 0) setPair(before, after)
  }
  if (onPart !== undefined) {
    for (let i = 0; i < n; i = end[i] ?? n) onPart(from + i, from + (end[i] ?? n))
  }
  return parts
}

const utf8 = new TextEncoder()

/** Merges a long piece chunk by chunk, cutting only between characters. */
const mergeLong = (piece: string, onToken: ((rank: number) => void) | undefined): number => {
  const bytes = utf8.encode(piece)
  const m = makeMerger(Math.min(chunkBytes, bytes.length))
  const onPart = onToken === undefined
    ? undefined
    : (from: number, to: number) => onToken(rankOf(bytes, from, to))
  let parts = 0
  let from = 0
  while (from < bytes.length) {
    let to = Math.min(from + chunkBytes, bytes.length)
    // Back to the start of a character: never cut a UTF-8 sequence.
    while (to < bytes.length && to > from + 1 && ((bytes[to] ?? 0) & 0xc0) === 0x80) to--
    parts += merge(m, bytes, from, to, onPart)
    from = to
  }
  return parts
}

// ---------------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------------

// What the scan below sorts ASCII into: 1 letters, 2 punctuation and symbols, 3 whitespace;
// 0 for digits, which the pre-tokenizer takes three at a time.
const asciiKinds = Uint8Array.from({ length: 0x80 }, (_, c) => {
  const lower = c | 0x20
  return lower >= 0x61 && lower <= 0x7a
    ? 1
    : c >= 0x30 && c <= 0x39
    ? 0
    : c === 0x20 || (c >= 0x09 && c <= 0x0d)
    ? 3
    : 2
})

/**
 * Whether `text` may hold a piece longer than about `longPiece`. A cheap scan looks for long runs
 * of ASCII letters, punctuation or whitespace. Non-ASCII characters lengthen the run they are in,
 * so every piece lies within one or two runs. Texts without a long run, nearly all, go to
 * gpt-tokenizer whole; the others are cut into pieces first. Both ways count exactly: this only
 * picks the faster one.
 */
const mayHoldLongPiece = (text: string): boolean => {
  let kind = 0
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const next = c < 0x80 ? (asciiKinds[c] ?? 0) : kind === 0 ? 4 : kind
    if (next !== 0 && next === kind) {
      if (++run > longPiece) return true
    } else {
      kind = next
      run = 1
    }
  }
  return false
}

const whitespace = /^\s$/u

/**
 * Walks `text` as the pre-tokenizer splits it: each stretch of ordinary pieces goes to
 * `onOrdinary` whole, each long piece to `onLong`.
 *
 * A stretch cut at piece boundaries splits as it did inside the text. The pattern looks behind
 * nothing, and ahead only in `\s+(?!\S)`. One exception: whitespace other than a line break
 * ending the stretch, before a long piece that starts with a non-space. In the text, its last
 * character was a piece of its own, as `\s+(?!\S)` stops one short of a non-space. So that
 * character is passed on as a stretch of its own.
 */
const split = (text: string, onOrdinary: (stretch: string) => void, onLong: (piece: string) => void): void => {
  let stretch = 0
  for (const match of text.matchAll(splitPattern)) {
    const piece = match[0]
    if (piece.length <= longPiece) continue
    const at = match.index
    const last = text[at - 1] ?? ""
    if (
      at - 1 > stretch && last !== "\n" && last !== "\r" && whitespace.test(last) &&
      !whitespace.test(piece[0] ?? "")
    ) {
      onOrdinary(text.slice(stretch, at - 1))
      onOrdinary(last)
    } else if (at > stretch) {
      onOrdinary(text.slice(stretch, at))
    }
    onLong(piece)
    stretch = at + piece.length
  }
  if (stretch < text.length) onOrdinary(stretch === 0 ? text : text.slice(stretch))
}

/**
 * The number of o200k tokens in `text`, in time linear in its length. It equals gpt-tokenizer's
 * count except for pieces over `chunkBytes` bytes.
 */
export const count = (text: string): number => {
  if (!mayHoldLongPiece(text)) return countTokens(text, plainText)
  let total = 0
  split(
    text,
    (stretch) => {
      total += countTokens(stretch, plainText)
    },
    (piece) => {
      total += mergeLong(piece, undefined)
    }
  )
  return total
}

/** The o200k tokens of `text`, in linear time. Exact but for pieces over `chunkBytes` bytes. */
export const encode = (text: string): Array<number> => {
  if (!mayHoldLongPiece(text)) return encodeOrdinary(text, plainText)
  const tokens: Array<number> = []
  split(
    text,
    (stretch) => {
      for (const token of encodeOrdinary(stretch, plainText)) tokens.push(token)
    },
    (piece) => {
      mergeLong(piece, (rank) => {
        tokens.push(rank)
      })
    }
  )
  return tokens
}
