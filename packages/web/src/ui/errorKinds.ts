import { ERROR_KINDS, isErrorKind } from "@herald/contracts/errorKinds";

/**
 * What an attempt's error kind means, in a few words for the people whose endpoint it is: the
 * contracts' ERROR_KINDS, which the API reference shows too. A kind these pages do not know
 * yet (from a newer sender) shows as itself.
 */
export const errorKindMeaning = (kind: string): string | null =>
  isErrorKind(kind) ? ERROR_KINDS[kind] : null;
