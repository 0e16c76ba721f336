/**
 * The doc tags of the public API: every export of a public module has `@since` and a `@category`
 * of the fixed set, so the reference groups alike things alike in every module. docgen enforces
 * `@since` only; this checks the rest. Public: the files of `src/` outside `internal/` folders and
 * the command line, as `docgen.json` excludes.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

/** The categories of the reference, one word per kind of export. */
export const categories: ReadonlySet<string> = new Set([
  "constructors",
  "layers",
  "tags",
  "models",
  "schemas",
  "errors",
  "config",
  "constants",
  "conversions",
  "utils",
  "deprecated"
])

/** The public modules under `srcDir`. */
export const publicFiles = (srcDir: string): Array<string> =>
  readdirSync(srcDir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(srcDir, entry.name)
    if (entry.isDirectory()) return entry.name === "internal" || entry.name === "cli" ? [] : publicFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

const docComments = (text: string, position: number): Array<string> =>
  (ts.getLeadingCommentRanges(text, position) ?? [])
    .map((range) => text.slice(range.pos, range.end))
    .filter((comment) => comment.startsWith("/**"))

const tag = (doc: string, name: string): string | undefined => doc.match(new RegExp(`@${name}[ \\t]+(\\S[^\\n]*)`))?.[1]

const unchecked = "docgen neither typechecks nor runs an @example here"

const isExported = (statement: ts.Statement): boolean =>
  ts.canHaveModifiers(statement) &&
  (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)

const declaredNames = (statement: ts.Statement): Array<string> => {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.map((declaration) => declaration.name.getText())
  }
  if (
    ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement) || ts.isModuleDeclaration(statement) ||
    ts.isImportEqualsDeclaration(statement)
  ) {
    return statement.name === undefined ? [] : [statement.name.getText()]
  }
  return []
}

/**
 * What is wrong with the doc tags of one module's text: each export without `@since`, without
 * `@category`, or with a category outside `categories`; an `@example` where docgen does not check
 * it (on a class or a re-export: put it in the module's comment, or on a function or constant).
 * `export * as X` takes docgen's default category (`exports`) when it names none.
 */
export const problems = (fileName: string, text: string): Array<string> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found: Array<string> = []
  const check = (name: string, doc: string | undefined, categoryRequired: boolean): void => {
    if (doc === undefined || tag(doc, "since") === undefined) found.push(`${name}: no @since`)
    const category = doc === undefined ? undefined : tag(doc, "category")
    if (category === undefined) {
      if (categoryRequired) found.push(`${name}: no @category`)
    } else if (!categories.has(category.trim())) {
      found.push(`${name}: @category ${category.trim()} is not one of ${[...categories].join(", ")}`)
    }
  }
  const visit = (statements: ts.NodeArray<ts.Statement>, prefix: string): void => {
    for (const statement of statements) {
      if (ts.isExportDeclaration(statement)) {
        const clause = statement.exportClause
        if (clause !== undefined && ts.isNamedExports(clause)) {
          for (const element of clause.elements) {
            const doc = docComments(text, element.pos).at(-1)
            check(`${prefix}${element.name.text}`, doc, true)
            if (doc?.includes("@example")) found.push(`${prefix}${element.name.text}: ${unchecked}`)
          }
        } else {
          const name = `${prefix}${statement.moduleSpecifier?.getText() ?? "export *"}`
          const comments = docComments(text, statement.pos)
          // docgen reads the first comment before `export *`: on a module's first statement, that
          // is the module's own comment.
          if (comments.length > 1) found.push(`${name}: docgen reads the module's comment as its doc`)
          check(name, comments[0], false)
        }
        continue
      }
      if (!isExported(statement)) continue
      const doc = docComments(text, statement.pos).at(-1)
      for (const name of declaredNames(statement)) check(`${prefix}${name}`, doc, true)
      if (ts.isClassDeclaration(statement) && doc?.includes("@example")) {
        found.push(`${prefix}${statement.name?.getText() ?? "class"}: ${unchecked}`)
      }
      if (ts.isModuleDeclaration(statement) && statement.body !== undefined && ts.isModuleBlock(statement.body)) {
        visit(statement.body.statements, `${prefix}${statement.name.getText()}.`)
      }
    }
  }
  visit(source.statements, "")
  return found
}

/** The problems of every public module under `root`'s `src/`, each prefixed with its file. */
export const check = (root: string): Array<string> =>
  publicFiles(join(root, "src")).flatMap((file) =>
    problems(file, readFileSync(file, "utf8")).map((problem) => `${relative(root, file)}: ${problem}`)
  )
