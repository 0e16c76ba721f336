/**
 * What `npm run docs` runs before docgen: the doc tags' check (`tags.ts`), then the modules the
 * examples import.
 *
 * docgen rewrites an example's `from "effect-chat-memory/X"` to `from "../../src/X"`, relative to
 * `<outDir>/examples`. With `outDir` `api/reference`, that is `api/src/X`: here, one file per entry
 * of package.json's `exports`, re-exporting the module it names. So an example imports what an app
 * can import, by the same names, and nothing else.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { check } from "./tags.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const shims = join(root, "api", "src")

const problems = check(root)
if (problems.length > 0) {
  console.error(`docs: ${problems.length} exports need doc tags\n${problems.map((p) => `  ${p}`).join("\n")}`)
  process.exit(1)
}

const manifest: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const exportsMap = typeof manifest === "object" && manifest !== null && "exports" in manifest &&
    typeof manifest.exports === "object" && manifest.exports !== null
  ? manifest.exports
  : {}

rmSync(shims, { recursive: true, force: true })
for (const [subpath, target] of Object.entries(exportsMap)) {
  const built: unknown = typeof target === "object" && target !== null && "import" in target ? target.import : undefined
  if (typeof built !== "string") continue
  const file = join(shims, subpath === "." ? "index.ts" : `${subpath.slice(2)}.ts`)
  const source = join(root, built.replace(/^\.\/dist\//, "src/"))
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `export * from "${relative(dirname(file), source)}"\n`)
}
