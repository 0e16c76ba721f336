/**
 * The README and docs/ hold together: every relative link names a file that exists and, with an
 * anchor, a heading of it (GitHub's slugs); no page names a commit (history goes in the changelog).
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { root } from "./fixtures/cli.js"
import { documents } from "./fixtures/docs.js"

/** The text outside fenced code blocks and inline code. */
const prose = (markdown: string): string => markdown.replaceAll(/^```[\s\S]*?^```$/gm, "").replaceAll(/`[^`\n]*`/g, "")

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export const slug = (heading: string): string =>
  heading.trim().toLowerCase().replaceAll(/[^\p{L}\p{N}\s_-]/gu, "").replaceAll(/\s/g, "-")

/** The anchors of a document's headings (repeated headings get -1, -2, … as on GitHub). */
const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const match of markdown.replaceAll(/^```[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug((match[1] ?? "").replaceAll("`", ""))
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    found.add(count === 0 ? base : `${base}-${count}`)
  }
  return found
}

/** The relative links of a document: `[text](target)`, without web links. */
export const links = (markdown: string): Array<string> =>
  [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].flatMap((match) => {
    const target = match[1] ?? ""
    return /^[a-z]+:/i.test(target) ? [] : [target]
  })

/** Problems with one link of `document`: its file or its anchor missing. */
const check = (document: string, target: string): string | undefined => {
  const [path = "", anchor] = target.split("#")
  const file = path === "" ? document : normalize(join(dirname(document), path))
  if (!existsSync(join(root, file))) return `${document}: ${target}: no file ${file}`
  if (anchor === undefined || !file.endsWith(".md")) return undefined
  return anchors(readFileSync(join(root, file), "utf8")).has(anchor)
    ? undefined
    : `${document}: ${target}: no heading #${anchor} in ${file}`
}

/** A commit hash as a word: 7 to 40 hex digits with at least one letter and one digit. */
const commitHash = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b/g

describe("the README and docs/", () => {
  it("the link check sees a missing file and a missing heading", () => {
    expect(links("see [a](docs/x.md#y), [b](https://effect.website) and `[c](no.md)`")).toEqual(["docs/x.md#y"])
    expect(check("README.md", "docs/no-such-page.md")).toContain("no file")
    expect(check("README.md", "docs/users.md#no-such-heading")).toContain("no heading")
    expect(slug("PostgreSQL and an OpenAI model")).toBe("postgresql-and-an-openai-model")
    expect(slug("What `npm start` shows".replaceAll("`", ""))).toBe("what-npm-start-shows")
  })

  it("every relative link names a file and a heading that exist", () => {
    const problems = documents().flatMap((document) =>
      links(readFileSync(join(root, document), "utf8")).flatMap((target) => check(document, target) ?? [])
    )
    expect(problems).toEqual([])
  })

  it("no page names a commit", () => {
    expect("at 04d40af".match(commitHash)).toEqual(["04d40af"])
    expect("1000000 and deadbeef".match(commitHash)).toBeNull()
    const found = documents().flatMap((document) =>
      [...readFileSync(join(root, document), "utf8").matchAll(commitHash)].map((match) => `${document}: ${match[0]}`)
    )
    expect(found).toEqual([])
  })
})
