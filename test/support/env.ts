/** Where the test suite finds PostgreSQL and RabbitMQ (the same defaults as `npm start`). */
export const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
/**
 * Test databases are named `herald_t_<pid of the run>_…`, so a run can tell its own from those
 * of another run going on at the same time, and drop only those whose run has died.
 */
export const RUN_ID = process.env.HERALD_TEST_RUN ?? String(process.pid);
export const TEMPLATE_DB = `herald_t_${RUN_ID}_template`;

export function databaseUrl(name: string): string {
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
