/**
 * The UTF-8 length of a string, without encoding it.
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
