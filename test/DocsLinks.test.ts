/**
 * The README and docs/ hold together: every relative link names a file that exists and, with an
 * anchor, a heading of it (GitHub's slugs); no page names a commit (history goes in the changelog):
 * no hash of any repository, and no number that starts one of this repository's commits.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
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

/** A UUID: an id of an example, never a commit. */
const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi

/** 7 to 40 hex digits standing as a word (a SHA-256 digest, 64 digits, is not one). */
const hexWord = /\b[0-9a-f]{7,40}\b/g

/**
 * The commits a text names. A hex word with a letter and a digit has a commit's shape, in any
 * repository. A hex word of digits only (a number such as 4194304) or of letters only (a word such
 * as "defaced") names a commit only when one of `known` starts with it. UUIDs are left out.
 */
export const commitsNamed = (text: string, known: ReadonlyArray<string>): Array<string> =>
  [...text.replaceAll(uuid, " ").matchAll(hexWord)].flatMap(([word]) =>
    (/[a-f]/.test(word) && /[0-9]/.test(word)) || known.some((commit) => commit.startsWith(word)) ? [word] : []
  )

/** This repository's commits, or none outside a git checkout (a packed copy). */
const repositoryCommits = (): ReadonlyArray<string> => {
  try {
    return execFileSync("git", ["rev-list", "--all"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean)
  } catch {
    return []
  }
}

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

  it("the commit check sees a hash, a number that starts a commit, and no id or plain number", () => {
    const known = ["3141592a7e2c9d0b5f64a3c8e1d2b7f9a0c4e6d1"]
    expect(commitsNamed("the code at 04d40af, see abcdef0123456789abcdef0123456789abcdef01", [])).toEqual([
      "04d40af",
      "abcdef0123456789abcdef0123456789abcdef01"
    ])
    expect(commitsNamed("(commit 3141592) and 3141592a7e", known)).toEqual(["3141592", "3141592a7e"])
    expect(commitsNamed("4194304 characters, 1000000 and deadbeef, a defaced page", known)).toEqual([])
    expect(commitsNamed("id 550e8400-e29b-41d4-a716-446655440000 and pmpt_abc123", known)).toEqual([])
    expect(commitsNamed(`sha-256 ${"ab12".repeat(16)}`, known)).toEqual([])
  })

  it("no page names a commit", () => {
    const known = repositoryCommits()
    const found = documents().flatMap((document) =>
      commitsNamed(readFileSync(join(root, document), "utf8"), known).map((word) => `${document}: ${word}`)
    )
    expect(found).toEqual([])
  })
})
