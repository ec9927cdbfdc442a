import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Named prepared statements (`prepared` in packages/db/src/pool.ts): a name is one text on every
 * connection, or pg refuses the second, and a prepared statement's result must not be a table's
 * `*` (a migration adding a column would change a cached statement's result type).
 */
const root = join(import.meta.dirname, "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist" || name === "generated") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const statements = [join(root, "packages"), join(root, "services")].flatMap(sources).flatMap((file) => {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/prepared\(\s*"([^"]+)",\s*(?:\/\/[^\n]*\n\s*)*(`[^`]*`|"[^"]*")/g)].map((m) => ({
    file: relative(root, file),
    name: m[1]!,
    sql: m[2]!,
  }));
});

describe("prepared statements", () => {
  it("are found in the sources", () => {
    expect(statements.map((s) => s.name)).toContain("release-fast");
    expect(statements.length).toBeGreaterThanOrEqual(8);
  });

  it("each have a name of their own", () => {
    const names = statements.map((s) => s.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("list their result columns rather than select a table's *", () => {
    for (const s of statements) {
      // The last SELECT or RETURNING of the statement is its result.
      const tail = s.sql.slice(Math.max(s.sql.lastIndexOf("SELECT"), s.sql.lastIndexOf("RETURNING")));
      expect(tail, `${s.name} in ${s.file}`).not.toMatch(
        /SELECT\s+(\w+\.)?\*\s+FROM\s+(events|attempts|deliveries|endpoints|endpoint_flows|outbox)\b|RETURNING\s+(\w+\.)?\*/,
      );
    }
  });
});
