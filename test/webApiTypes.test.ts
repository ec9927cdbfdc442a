import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The portal and the dashboard (packages/web) take the API's objects from the SDK's generated
// types (`@herald/sdk/types`, types only: no SDK code in the bundle) and the statuses from
// @herald/contracts. Never from @herald/db (Prisma, pg), and never as a copy of their own.

const root = fileURLToPath(new URL("..", import.meta.url));
const web = join(root, "packages", "web");
const db = join(root, "packages", "db");
const sdk = join(root, "packages", "sdk");

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** The file `@herald/sdk/types` is, as the pages' typecheck resolves it. */
function sdkTypesFile(): string {
  const entry = readJson(join(sdk, "package.json")).exports["./types"];
  return join(sdk, entry["@herald/source"]);
}

function parse(path: string, text = readFileSync(path, "utf8")): ts.SourceFile {
  const kind = path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
}

/** The types the SDK's generator writes: each API object, its operations and payloads. */
function apiTypeNames(): Set<string> {
  const names = new Set<string>();
  for (const node of parse(sdkTypesFile()).statements) {
    const exported = ts.canHaveModifiers(node)
      ? ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (exported && (ts.isTypeAliasDeclaration(node) || ts.isInterfaceDeclaration(node)))
      names.add(node.name.text);
  }
  return names;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** What in one source of the pages breaks the rule, one line each. */
function problems(file: ts.SourceFile, apiTypes: Set<string>): string[] {
  const found: string[] = [];
  const fromModule = (specifier: string, typeOnly: boolean) => {
    const inDb =
      specifier.startsWith(".") && !relative(db, resolve(dirname(file.fileName), specifier)).startsWith("..");
    if (specifier === "@herald/db" || specifier.startsWith("@herald/db/") || inDb)
      found.push(`imports ${specifier}: the database package`);
    if (!typeOnly && (specifier === "@herald/sdk" || specifier.startsWith("@herald/sdk/")))
      found.push(`imports ${specifier} as code: write \`import type\``);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      fromModule(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      fromModule(node.moduleSpecifier.text, node.isTypeOnly);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const ref = node.moduleReference.expression;
      if (ts.isStringLiteral(ref)) fromModule(ref.text, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) fromModule(arg.literal.text, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) fromModule(arg.text, false);
    }
    if (
      (ts.isTypeAliasDeclaration(node) ||
        ts.isInterfaceDeclaration(node) ||
        ts.isClassDeclaration(node) ||
        ts.isEnumDeclaration(node)) &&
      node.name &&
      apiTypes.has(node.name.text)
    )
      found.push(
        `declares ${node.name.text}: the SDK's generated types have it (import type from @herald/sdk/types)`,
      );
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("the pages' API types", () => {
  it("come from the SDK's generated types and the contracts, not from @herald/db", () => {
    const pkg = readJson(join(web, "package.json"));
    for (const field of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"])
      expect(Object.keys(pkg[field] ?? {}), field).not.toContain("@herald/db");
    expect(pkg.devDependencies).toHaveProperty("@herald/sdk");
    expect(pkg.dependencies).toHaveProperty("@herald/contracts");
  });

  it("are not declared again in any source of the pages", () => {
    const apiTypes = apiTypeNames();
    // The names the pages use most: if the generator stopped writing them, this check would see nothing.
    for (const name of ["App", "Endpoint", "Event", "Attempt", "Replay", "EventType", "Session"])
      expect(apiTypes).toContain(name);
    const files = sources(join(web, "src"));
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((path) =>
      problems(parse(path), apiTypes).map((p) => `${relative(root, path)}: ${p}`),
    );
    expect(found).toEqual([]);
  });

  it("tells each way of breaking the rule", () => {
    const sample = `
import { ATTEMPT_STATUSES } from "@herald/db/statuses";
import { isOpen } from "../../../db/src/lifecycle/index.ts";
import { Herald } from "@herald/sdk";
import { type Endpoint } from "@herald/sdk/types";
import type { Attempt } from "@herald/sdk/types";
import { DELIVERY_STATUSES } from "@herald/contracts/statuses";
export type { Replay } from "@herald/sdk/types";
type Pending = import("@herald/sdk/types").Delivery;
export type App = { id: string };
interface Session { app: string }
type Shown = Attempt["status"];
`;
    const file = parse(join(web, "src", "portal", "Sample.tsx"), sample);
    expect(problems(file, new Set(["App", "Session", "Attempt", "Endpoint"]))).toEqual([
      "imports @herald/db/statuses: the database package",
      "imports ../../../db/src/lifecycle/index.ts: the database package",
      "imports @herald/sdk as code: write `import type`",
      "imports @herald/sdk/types as code: write `import type`",
      "declares App: the SDK's generated types have it (import type from @herald/sdk/types)",
      "declares Session: the SDK's generated types have it (import type from @herald/sdk/types)",
    ]);
  });
});
