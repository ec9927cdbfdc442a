/** `rows` in order, cut into runs of about `max` bytes (a row larger than that alone). */
export function inChunks<T>(rows: T[], bytes: (row: T) => number, max: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const row of rows) {
    const b = bytes(row);
    if (current.length && size + b > max) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(row);
    size += b;
  }
  if (current.length) chunks.push(current);
  return chunks;
}
