import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts"],
    exclude: ["test/serial/**", "**/node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only queue behind each other.
    maxWorkers: 2,
  },
});
