/**
 * What `herald listen` requests a gateway holds, in bytes: a request counts from the moment its
 * socket takes it until it is both written to the client and answered (or expired). The body
 * itself is not kept once written (socket.ts keeps only how to answer), so what these budgets
 * bound in memory is what is not yet written; what they bound for the client is how much it may
 * leave unanswered. A request that does not fit is refused at once: its attempt fails as a
 * `timeout`, the endpoint's doing (its client did not answer the earlier ones).
 *
 * The sizes: an event's request body is at most 1 MiB (http/body.ts), its payload as sent up to
 * about 1.5 MiB, and relayed as a JSON string (quotes escaped) up to about 3 MiB. A gateway
 * holds up to 1000 sockets (socket.ts), and runs with a heap of 160 MiB in a container of
 * 384 MiB (service-node-flags.json, deploy/base/api-gateway.yaml): one largest request for each
 * socket would be 3 GiB, so the gateway has a budget of its own, whoever's sockets take it.
 */

/** Unanswered requests one socket holds, bytes; one socket holding none takes any single one, so the largest event still reaches a client that answers. */
export const HELD_PER_SOCKET = 2 * 1024 * 1024;
/** Unanswered requests one gateway holds over all its sockets, bytes: a fifth of its heap, ten of the largest requests. */
export const HELD_PER_GATEWAY = 32 * 1024 * 1024;

/** Bytes held against a limit; `anyWhenEmpty`: one request of any size fits while none is held. */
export class ByteBudget {
  private held = 0;

  constructor(
    readonly max: number,
    private readonly anyWhenEmpty = false,
  ) {}

  get bytes(): number {
    return this.held;
  }

  fits(bytes: number): boolean {
    return this.held + bytes <= this.max || (this.anyWhenEmpty && this.held === 0);
  }

  add(bytes: number): void {
    this.held += bytes;
  }
}

/**
 * Takes `bytes` from every budget if each has room, else from none (null). The function
 * returned gives them back, once, however often it is called.
 */
export function hold(budgets: readonly ByteBudget[], bytes: number): (() => void) | null {
  if (!budgets.every((b) => b.fits(bytes))) return null;
  for (const b of budgets) b.add(bytes);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    for (const b of budgets) b.add(-bytes);
  };
}
