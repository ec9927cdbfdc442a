import type { CodeOptions } from "ajv";
import { RE2JS } from "re2js";

type RegExpEngine = NonNullable<CodeOptions["regExp"]>;

/** The longest `pattern` (or `patternProperties` key) a schema may hold. */
export const PATTERN_MAX = 1000;

/**
 * The regular expressions of customers' schemas (`pattern`, `patternProperties`) run on RE2
 * (re2js, pure JavaScript): time linear in the input, whatever the pattern, where the
 * JavaScript engine backtracks and `^(a+)+$` on 35 characters takes minutes. RE2 has no
 * lookaround and no backreferences, the features that need backtracking: a pattern using them
 * is refused when the schema is compiled, naming the pattern.
 */
function compile(pattern: string): ReturnType<RegExpEngine> {
  const shown = JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern);
  if (pattern.length > PATTERN_MAX) {
    throw new Error(
      `pattern ${shown} has ${pattern.length} characters; at most ${PATTERN_MAX} (pattern size)`,
    );
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    throw new Error(
      `pattern ${shown} is not supported: ${(err as Error).message} (patterns run on RE2, without lookaround or backreferences)`,
    );
  }
  // toString: Ajv keys its compiled patterns by it.
  const compiled = { test: (s: string) => re.test(s), toString: () => `/${pattern}/` };
  return compiled;
}

export const linearRegExp: RegExpEngine = Object.assign(compile, { code: "linearRegExp" });
