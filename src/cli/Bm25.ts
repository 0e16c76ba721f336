/**
 * The baseline `eval` compares recall with: a plain BM25 index over every turn so far, across a
 * user's conversations. Each turn is one document. The best turns that fit the budget are taken,
 * counting characters / 4 tokens, as the approximate counter does.
 */
import { documentTerms, queryTerms } from "../domain/internal/searchTerms.js"

const k1 = 1.2
const b = 0.75

/** A turn as the index holds it: its text and its terms. */
interface Document {
  readonly text: string
  readonly terms: ReadonlyMap<string, number>
  readonly length: number
}

/** A BM25 index of turns, added one by one. */
export const make = () => {
  const documents: Array<Document> = []
  const frequency = new Map<string, number>()
  let lengths = 0
  return {
    add: (text: string): void => {
      const terms = documentTerms(text)
      let length = 0
      for (const [term, count] of terms) {
        frequency.set(term, (frequency.get(term) ?? 0) + 1)
        length += count
      }
      documents.push({ text, terms, length })
      lengths += length
    },
    /** The text of the best turns for `query`, best first, as many as fit `budget` tokens together. */
    context: (query: string, budget: number): string => {
      const terms = queryTerms(query)
      const n = documents.length
      const average = n === 0 ? 1 : lengths / n
      const scored = documents.map((document, i) => {
        let score = 0
        for (const term of terms) {
          const tf = document.terms.get(term) ?? 0
          if (tf === 0) continue
          const df = frequency.get(term) ?? 0
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
          score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * document.length / average))
        }
        return { i, score }
      }).filter(({ score }) => score > 0).sort((x, y) => y.score - x.score || y.i - x.i)
      const kept: Array<string> = []
      let used = 0
      for (const { i } of scored) {
        const text = documents[i]?.text ?? ""
        const tokens = Math.ceil(text.length / 4)
        if (used + tokens > budget) continue
        kept.push(text)
        used += tokens
      }
      return kept.join("\n")
    }
  }
}
