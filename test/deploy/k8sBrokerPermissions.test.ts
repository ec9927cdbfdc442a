import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Broker, BrokerUnavailableError } from "@herald/broker";
import { createLogger } from "@herald/runtime";
import amqp from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { AMQP_URL, RUN_ID } from "../support/env.ts";
import { deployDir, ofKind, render } from "../support/k8s.ts";

/**
 * The RabbitMQ user deploy/README.md tells operators to create, tried for real: a vhost and a
 * user of this run's own on the local RabbitMQ, given exactly the README's permissions
 * (`rabbitmqctl set_permissions`), then packages/broker connecting as that user declares
 * Herald's topology, publishes to its exchange and, as the dispatcher does with retries, to a
 * delay queue through the default exchange; the messages arrive where the services read them.
 */
const readme = readFileSync(join(deployDir, "README.md"), "utf8");
const documented = /rabbitmqctl set_permissions -p \S+ herald '([^']*)' '([^']*)' '([^']*)'/.exec(readme);
const prefix = ofKind(render("production"), "ConfigMap")[0]!.data.AMQP_PREFIX as string;
const logger = createLogger("k8s-broker-permissions", "silent");

function rabbitmqctl(...args: string[]): string {
  try {
    return execFileSync("rabbitmqctl", args, { encoding: "utf8", stdio: "pipe" });
  } catch (err) {
    throw new Error(
      `rabbitmqctl ${args[0]} failed: this test configures the RabbitMQ of AMQP_URL (${new URL(AMQP_URL).host}) with rabbitmqctl, which must run on its host: ${(err as Error).message}`,
    );
  }
}

const created: { vhost: string; user: string }[] = [];
afterAll(() => {
  for (const { vhost, user } of created) {
    rabbitmqctl("delete_user", user);
    rabbitmqctl("delete_vhost", vhost);
  }
});

/** A vhost and a user of this run with these permissions, and the URL to connect as that user. */
function userWith(configure: string, write: string, read: string): string {
  const name = `herald_t_${RUN_ID}_perm_${randomBytes(4).toString("hex")}`;
  const password = randomBytes(12).toString("hex");
  rabbitmqctl("add_vhost", name);
  created.push({ vhost: name, user: name });
  rabbitmqctl("add_user", name, password);
  rabbitmqctl("set_permissions", "-p", name, name, configure, write, read);
  const url = new URL(AMQP_URL);
  url.username = name;
  url.password = password;
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

const delayMs = 300;
const due = (id: string) => ({ attempt_id: `att_${id}`, delivery_id: `dlv_${id}` });

describe("the RabbitMQ user deploy/README.md creates", () => {
  it("is documented with one set_permissions for the prefix in config.env", () => {
    expect(documented, "a `rabbitmqctl set_permissions -p / herald '…' '…' '…'` line").not.toBeNull();
    expect(prefix).toBe("herald");
  });

  it("lets Herald declare its topology, publish events and schedule retries through the default exchange", async () => {
    const [, configure, write, read] = documented!;
    const url = userWith(configure!, write!, read!);
    const broker = new Broker({ url, prefix, logger, delaysMs: [delayMs] });
    try {
      expect(await broker.start(10_000), "connected and declared the topology").toBe(true);
      await broker.publish("retry.due.v1", due("direct"));
      // What the dispatcher does with a retry: straight to the delay queue, then back, due.
      await broker.publishToQueue(broker.topology.delayQueue(delayMs), "retry.due.v1", due("delayed"));

      // Read as the same user, from the queue the dispatcher consumes.
      const connection = await amqp.connect(url);
      try {
        const channel = await connection.createChannel();
        const received: string[] = [];
        await expect
          .poll(
            async () => {
              const message = await channel.get(broker.topology.queues.dispatcherRetries, { noAck: true });
              if (message) received.push(JSON.parse(message.content.toString()).attempt_id);
              return received.sort();
            },
            { timeout: 10_000, interval: 100 },
          )
          .toEqual(["att_delayed", "att_direct"]);
      } finally {
        await connection.close();
      }
    } finally {
      await broker.close();
    }
  });

  it("would refuse the retries without write on amq.default (what the pattern adds)", async () => {
    const [, configure, , read] = documented!;
    const url = userWith(configure!, `^${prefix}\\..*`, read!);
    const broker = new Broker({ url, prefix, logger, delaysMs: [delayMs] });
    try {
      expect(await broker.start(10_000)).toBe(true);
      await broker.publish("retry.due.v1", due("direct"));
      const retry = broker.publishToQueue(
        broker.topology.delayQueue(delayMs),
        "retry.due.v1",
        due("delayed"),
      );
      await expect(retry).rejects.toBeInstanceOf(BrokerUnavailableError);
      // RabbitMQ answers with a 403 that closes the channel: the publish is not confirmed.
      await expect(retry).rejects.toThrow(/channel closed/);
    } finally {
      await broker.close();
    }
  });
});
