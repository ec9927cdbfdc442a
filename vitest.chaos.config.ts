import { defineConfig } from "vitest/config";

// The failure tests restart RabbitMQ, so they run on their own, after everything else.
export default defineConfig({
  test: {
    include: ["test/chaos/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 400_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
