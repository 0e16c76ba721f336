// One run of scripts/tokenizer-versions.sh: loads gpt-tokenizer's o200k_base encoding from the
// directory given and times `countTokens` on short chat messages, 4 KB messages and one 140 KB
// text (deterministic, with identifiers, amounts and emails), medians of 7 after a warm-up.
import { memoryUsage } from "node:process"

const [dir, version] = process.argv.slice(2)
const rss0 = memoryUsage().rss
const t0 = performance.now()
const encoding = await import(`${dir}/node_modules/gpt-tokenizer/esm/encoding/o200k_base.js`)
const loadMs = performance.now() - t0
const words = ("the delivery order warehouse dock slot invoice customer carrier pallet route schedule refund " +
  "address window driver tracking weather delay priority contract supplier quantity discount we should " +
  "confirm tomorrow morning because it moved again after your last message about").split(" ")
let seed = 1
const random = (n) => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
  return seed % n
}
const word = () => {
  const r = random(20)
  return r === 0
    ? `ORD-2024-${10000 + random(90000)}`
    : r === 1
    ? `$${random(5000)}.${random(100)}`
    : r === 2
    ? `jane.doe${random(99)}@example.com`
    : words[random(words.length)]
}
const sentence = (n) => Array.from({ length: n }, word).join(" ")
const short = Array.from({ length: 2000 }, () => `${sentence(20 + random(60))}.`)
const long = Array.from({ length: 200 }, () => Array.from({ length: 10 }, () => sentence(70)).join(". "))
const big = Array.from({ length: 250 }, () => sentence(70)).join("\n")
const count = (texts) => {
  const start = performance.now()
  let tokens = 0
  for (const text of texts) tokens += encoding.countTokens(text)
  return [performance.now() - start, tokens]
}
count(short)
count(long)
const samples = { short: [], long: [], big: [] }
let counts = []
for (let r = 0; r < 7; r++) {
  const [a, na] = count(short)
  const [b, nb] = count(long)
  const [c, nc] = count([big])
  samples.short.push((a * 1000) / short.length)
  samples.long.push((b * 1000) / long.length)
  samples.big.push(c)
  counts = [na, nb, nc]
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(JSON.stringify({
  version,
  loadMs: Math.round(loadMs),
  rssMiB: Math.round((memoryUsage().rss - rss0) / 2 ** 20),
  shortMessageUs: Number(median(samples.short).toFixed(2)),
  message4KbUs: Number(median(samples.long).toFixed(1)),
  text140KbMs: Number(median(samples.big).toFixed(2)),
  counts
}))
