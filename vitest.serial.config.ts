import { defineConfig } from "vitest/config";

// Tests that must run alone, after everything else: the failure tests restart RabbitMQ, the
// benchmark check wants the machine to itself, and the local-scaling test starts seven processes.
export default defineConfig({
  test: {
    include: ["test/serial/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 400_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
