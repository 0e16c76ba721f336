/**
 * Every TypeScript block of the README and of docs/ is a program an app could paste: each block is a complete
 * module, or its first line says it continues the block above (`// Continues the block above`).
 * The blocks are written to a scratch directory and typechecked as one TypeScript program, as a
 * strict app compiles them: the repository's strict options (`exactOptionalPropertyTypes`,
 * `noUncheckedIndexedAccess`, …) with `skipLibCheck: false`, so that the declarations of every
 * package they load are checked too (the `@types/*` packages the README names), and
 * `effect-chat-memory` mapped to `src/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { root } from "./fixtures/cli.js"
import { documents } from "./fixtures/docs.js"

/** A program made of one block, or of a block and the blocks that continue it. */
interface Program {
  /** The README line of its first block's opening fence. */
  readonly line: number
  readonly source: string
}

const continuation = /^\/\/ Continues the block above\b/

/** The README's TypeScript blocks, joined into programs. */
export const programs = (readme: string): ReadonlyArray<Program> => {
  const result: Array<Program> = []
  for (const match of readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const source = match[1] ?? ""
    const line = readme.slice(0, match.index).split("\n").length
    const previous = result[result.length - 1]
    if (continuation.test(source)) {
      if (previous === undefined) throw new Error(`README line ${line}: a continuation with no block above`)
      result[result.length - 1] = { line: previous.line, source: `${previous.source}\n${source}` }
    } else {
      result.push({ line, source })
    }
  }
  return result
}

/** The package's subpaths as `package.json` lists them, each mapped to its source. */
const subpaths = (): Record<string, Array<string>> => {
  const manifest: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  const exports = typeof manifest === "object" && manifest !== null && "exports" in manifest &&
      typeof manifest.exports === "object" && manifest.exports !== null
    ? Object.entries(manifest.exports)
    : []
  const paths: Record<string, Array<string>> = {}
  for (const [subpath, target] of exports) {
    const file = typeof target === "object" && target !== null && "import" in target &&
        typeof target.import === "string"
      ? target.import
      : undefined
    if (file === undefined) continue
    const name = subpath === "." ? "effect-chat-memory" : `effect-chat-memory/${subpath.slice(2)}`
    paths[name] = [file.replace(/^\.\/dist\//, "../src/").replace(/\.js$/, ".ts")]
  }
  return paths
}

/**
 * The configuration a strict app compiles with: the repository's options, libraries' declarations
 * checked, `effect-chat-memory` and its subpaths mapped to `src/`.
 */
const tsconfig = (files: ReadonlyArray<string>) => ({
  extends: "../tsconfig.base.json",
  compilerOptions: {
    noEmit: true,
    skipLibCheck: false,
    // Effect's platform packages and PGlite declare browser types (Transferable, WebAssembly…).
    lib: ["ES2022", "DOM"],
    // PGlite's declarations use Emscripten's global types, which only `types` brings in.
    types: ["node", "emscripten"],
    paths: subpaths()
  },
  files
})

/** `tsc -p` in a process of its own (a whole program checked takes a while: the test's thread stays free). */
const tsc = (project: string) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    const child = spawn(process.execPath, [
      join(root, "node_modules/typescript/bin/tsc"),
      "-p",
      project,
      "--pretty",
      "false"
    ], {
      cwd: root
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.on("close", (code) => resolve({ code, output }))
  })

describe("TypeScript blocks of the README and docs/", () => {
  it("are split into programs: each block complete, or continuing the one above", () => {
    const readme = [
      "```ts\nconst a = 1\n```",
      "```ts\n// Continues the block above (a).\nexport const b = a\n```",
      "```ts\nexport const c = 2\n```"
    ].join("\ntext\n")
    expect(programs(readme)).toEqual([
      { line: 1, source: "const a = 1\n\n// Continues the block above (a).\nexport const b = a\n" },
      { line: 10, source: "export const c = 2\n" }
    ])
  })

  it("typecheck as one strict program, libraries' declarations included", async () => {
    const found = documents().flatMap((document) =>
      programs(readFileSync(join(root, document), "utf8")).map((program) => ({ document, ...program }))
    )
    expect(found.length).toBeGreaterThanOrEqual(10)
    // Inside the repository: its package.json makes them ES modules, its node_modules resolves them.
    const scratch = mkdtempSync(join(root, ".readme-snippets-"))
    try {
      const files = found.map((program) => {
        const file = `${program.document.replaceAll("/", "__")}-line-${program.line}.ts`
        writeFileSync(join(scratch, file), program.source)
        return file
      })
      writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify(tsconfig(files), null, 2))
      const { code, output } = await tsc(join(scratch, "tsconfig.json"))
      // The errors name the documents' lines: docs__x.md-line-N.ts holds the block of docs/x.md opened at line N.
      expect(output.replaceAll(scratch, "docs").replaceAll(relative(root, scratch), "docs")).toBe("")
      expect(code).toBe(0)
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }, 900_000) // a hang guard: one tsc of every block, libraries' declarations included
})
