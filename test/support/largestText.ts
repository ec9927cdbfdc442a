/**
 * Text and numbers made from a seed, for the API fuzzer's largest values (largest.ts): strings of
 * each style JSON and UTF-8 cost differently, and their size as JSON.
 */
export const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "");

/** Numbers in [0, 1) from `seed` (mulberry32): large values are made from a seed, not drawn piece by piece. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export const pick = <T>(rng: () => number, items: readonly T[]): T =>
  items[Math.floor(rng() * items.length)]!;

/** What strings are made of: each costs differently as JSON text, in UTF-8 and in UTF-16. */
const UNITS = {
  plain: [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"],
  // Escaped in JSON, most of them: two bytes for one character.
  quotes: ['"', '"', '"', "\\", "'"],
  multibyte: ["é", "€", "中", "ж", "ß"],
  // One code point (what `maxLength` counts), two UTF-16 units, four bytes.
  astral: ["💥", "𝄞", "😀", "🀄"],
  // Control characters, most escaped (\u0001: six bytes for one); none is a NUL.
  controls: ["\u0001", "\u001f", "\t", "\n", "\u007f", "\u2028"],
};
export type Style = keyof typeof UNITS;
export const STYLES = Object.keys(UNITS) as Style[];

/** `length` characters (code points) of `style`, from `seed`. */
export function text(length: number, style: Style, seed: number): string {
  if (length <= 0) return "";
  const rng = random(seed);
  const block = Array.from({ length: Math.min(length, 1024) }, () => pick(rng, UNITS[style]));
  const whole = Math.floor(length / block.length);
  return block.join("").repeat(whole) + block.slice(0, length - whole * block.length).join("");
}
