/**
 * The README stays a page of five minutes: at most 250 lines, the two commands first, one link to
 * the guide that wires PostgreSQL and an OpenAI model, and install lines that name the package's
 * peers at the ranges package.json gives (in the README and in docs/ alike).
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { root } from "./fixtures/cli.js"
import { documents } from "./fixtures/docs.js"

const read = (document: string): string => readFileSync(join(root, document), "utf8")

/** A property of a JSON object, if the value is one. */
const field = (json: unknown, key: string): unknown =>
  typeof json === "object" && json !== null ? Object.entries(json).find(([name]) => name === key)?.[1] : undefined

/** The string entries of package.json's object at `key` (its peer dependencies, its scripts). */
const manifest = (key: string): ReadonlyMap<string, string> => {
  const value = field(JSON.parse(read("package.json")), key)
  return new Map(
    typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([name, text]): Array<[string, string]> =>
        typeof text === "string" ? [[name, text]] : []
      )
      : []
  )
}

/** The section of a page under a heading, up to the next heading of its level or above. */
export const section = (markdown: string, heading: string): string | undefined => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => line.replace(/^#+ /, "") === heading && /^#+ /.test(line))
  if (start === -1) return undefined
  const level = (lines[start] ?? "").indexOf(" ")
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(" ") <= level)
  return lines.slice(start, end === -1 ? undefined : end).join("\n")
}

/** The `name@range` words of a text: a package name, scoped or not, and a caret range. */
export const pinned = (text: string): Array<readonly [string, string]> =>
  [...text.matchAll(/(?<![\w@/.-])((?:@[a-z0-9-]+\/)?[a-z0-9][a-z0-9.-]*)@(\^\d+(?:\.\d+){0,2})/g)].map((
    [, name = "", range = ""]
  ): readonly [string, string] => [name, range])

describe("the README", () => {
  const readme = read("README.md")

  it("is at most 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250)
  })

  it("opens with the two commands, which the scripts run", () => {
    const first = readme.match(/^# .+\n\n```sh\n([\s\S]*?)^```$/m)?.[1]?.split("\n") ?? []
    expect(first[0]).toMatch(/^npm install && npm start\s+#/)
    expect(first[1]).toMatch(/^npm test\s+#/)
    const scripts = manifest("scripts")
    expect(scripts.get("start")).toContain("src/cli/main.ts")
    expect(scripts.get("test")).toBe("vitest run")
  })

  it("leads to the PostgreSQL and OpenAI wiring in one link, a section that wires both", () => {
    expect(readme).toContain("(docs/wiring.md#postgresql-and-an-openai-model)")
    const wiring = section(read("docs/wiring.md"), "PostgreSQL and an OpenAI model") ?? ""
    expect(wiring).toContain("from \"@effect/sql-pg\"")
    expect(wiring).toContain("from \"@effect/ai-openai\"")
    expect(wiring).toMatch(/ChatMemory\.layer(Live|Config)\(/)
  })

  it("installs every peer at the range package.json gives, and so does every page", () => {
    expect(pinned("npm install effect@^3.22.2 @effect/sql-pg@^0.53.0. (see a@b.c)")).toEqual([
      ["effect", "^3.22.2"],
      ["@effect/sql-pg", "^0.53.0"]
    ])
    const peers = manifest("peerDependencies")
    expect(peers.size).toBeGreaterThan(0)
    const named = new Set(pinned(readme).map(([name]) => name))
    expect([...peers.keys()].filter((name) => !named.has(name))).toEqual([])
    const stale = documents().flatMap((document) =>
      pinned(read(document)).flatMap(([name, range]) => {
        const peer = peers.get(name)
        return peer !== undefined && peer !== range ? [`${document}: ${name}@${range}, package.json: ${peer}`] : []
      })
    )
    expect(stale).toEqual([])
  })
})

describe("docs/", () => {
  it("has a page for each task, each listed in its index", () => {
    const index = read("docs/README.md")
    const pages = documents().filter((document) => document.startsWith("docs/") && document !== "docs/README.md")
    for (
      const page of [
        "getting-started",
        "wiring",
        "configuration",
        "strategies",
        "recall",
        "users",
        "stores",
        "chat",
        "cli",
        "observability",
        "errors"
      ]
    ) {
      expect(pages).toContain(`docs/${page}.md`)
    }
    expect(pages.filter((page) => !index.includes(`](${page.slice("docs/".length)})`))).toEqual([])
  })
})
