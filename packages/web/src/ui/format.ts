/** A rate (0 to 1) as a percentage: whole at 0 % and 100 %, one decimal between; "—" when unknown. */
export function percent(rate: number | null): string {
  if (rate === null) return "—";
  const pct = rate * 100;
  return `${pct === 100 || pct === 0 ? pct.toFixed(0) : pct.toFixed(1)}%`;
}

/** "1 delivery", "2,500 deliveries": a count with its noun, singular or plural. */
export function counted(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}
