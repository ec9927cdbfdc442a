-- An endpoint's custom header values are sealed like its signing secret (secrets.ts, context
-- `endpoint:<id>:headers`): `headers_sealed` holds the whole map, and `headers` only the names
-- (each value ''). Rows from before keep their values in `headers` until the gateway seals
-- them at start (sealLegacyHeaders); the dispatcher sends either form.
ALTER TABLE "endpoints" ADD COLUMN "headers_sealed" TEXT;
