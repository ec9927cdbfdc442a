import { DEFAULT_DATABASE_URL } from "@herald/runtime/config";
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// engine "js" with an adapter keeps every CLI command we use (generate, migrate diff) on the
// bundled wasm engines: no engine binary is downloaded.
export default defineConfig({
  schema: "prisma/schema.prisma",
  engine: "js",
  experimental: { adapter: true },
  async adapter() {
    return new PrismaPg({
      connectionString: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    });
  },
});
