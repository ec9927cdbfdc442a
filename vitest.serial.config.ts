import { defineConfig } from "vitest/config";

// Tests that must run alone, after everything else: the failure tests restart RabbitMQ, the
// benchmark check wants the machine to itself, the local-scaling test starts seven processes, and
// the limits suite measures a bystander's latency, which other tests beside it would make.
export default defineConfig({
  test: {
    include: ["test/serial/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 400_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
