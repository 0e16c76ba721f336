/**
 * The lengths of a string by what it encodes, without encoding it: its UTF-8 bytes, and its first
 * code points.
 */

/**
 * The bytes `s` takes in UTF-8. A surrogate pair is one code point of four bytes. A lone
 * surrogate, written as U+FFFD, takes three.
 */
export const utf8Length = (s: string): number => {
  let bytes = 0
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xD800 && unit <= 0xDBFF && (s.charCodeAt(i + 1) & 0xFC00) === 0xDC00) {
      bytes += 4
      i += 1
    } else bytes += 3
  }
  return bytes
}

/**
 * The first `count` code points of `s`, as SQL's `left` cuts a text: a surrogate pair is one, never
 * cut in two.
 */
export const leadingCodePoints = (s: string, count: number): string => {
  if (s.length <= count) return s
  let end = 0
  let taken = 0
  for (const codePoint of s) {
    if (taken === count) break
    end += codePoint.length
    taken += 1
  }
  return s.slice(0, end)
}
