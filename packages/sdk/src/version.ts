/** This package's version (package.json's), sent in the User-Agent. A test keeps the two equal. */
export const VERSION = "0.1.0";
