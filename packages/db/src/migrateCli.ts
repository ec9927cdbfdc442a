import { ensureDatabase, migrate } from "./migrate.ts";

// `pnpm migrate`: create the database if needed and apply pending migrations.
const url = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/herald";
if (await ensureDatabase(url)) console.log(`created database ${new URL(url).pathname.slice(1)}`);
const applied = await migrate(url, (line) => console.log(line));
console.log(applied.length ? `${applied.length} migration(s) applied` : "database is up to date");
