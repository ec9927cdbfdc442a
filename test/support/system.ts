import { delayTiers, parseSchedule } from "@herald/db/lifecycle";
import { createLogger, createRegistry } from "@herald/runtime";
import { createDispatcher, type Dispatcher } from "../../services/dispatcher/src/app.ts";
import { loadConfig as dispatcherConfig } from "../../services/dispatcher/src/config.ts";
import { createSender, type Sender } from "../../services/sender/src/app.ts";
import { loadConfig as senderConfig } from "../../services/sender/src/config.ts";
import { startGateway, type TestGateway } from "./gateway.ts";

/**
 * The whole system in this process: a gateway, dispatchers and senders on one database and
 * queue prefix of the test's own. Local receivers are allowed (ALLOW_PRIVATE_DESTINATIONS)
 * unless the test says otherwise.
 */
export type TestSystem = TestGateway & { dispatchers: Dispatcher[]; senders: Sender[] };

export async function startSystem(
  env: Record<string, string> = {},
  counts = { dispatchers: 1, senders: 1 },
): Promise<TestSystem> {
  const shared = {
    RETRY_SCHEDULE: "1s,1s,1s",
    ALLOW_PRIVATE_DESTINATIONS: "true",
    HEALTH_PORT: "0",
    HEALTH_HOST: "127.0.0.1",
    ...env,
  };
  const delays = delayTiers(parseSchedule(shared.RETRY_SCHEDULE) ?? []);
  const gw = await startGateway(shared, delays);
  const level = process.env.TEST_LOG_LEVEL ?? "silent";
  const dispatchers = Array.from({ length: counts.dispatchers }, () =>
    createDispatcher(
      dispatcherConfig(gw.env),
      createLogger("dispatcher", level),
      createRegistry("dispatcher"),
    ),
  );
  const senders = Array.from({ length: counts.senders }, () =>
    createSender(senderConfig(gw.env), createLogger("sender", level), createRegistry("sender")),
  );
  for (const service of [...dispatchers, ...senders]) await service.start();
  return {
    ...gw,
    dispatchers,
    senders,
    async close() {
      for (const service of [...senders, ...dispatchers]) await service.stop();
      await gw.close();
    },
  };
}
