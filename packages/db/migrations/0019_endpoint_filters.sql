-- An endpoint's optional filter over the events it receives (a MongoDB-style query, checked by
-- the gateway and matched by the dispatcher at fan-out: @herald/contracts/filter). NULL: none.
ALTER TABLE "endpoints" ADD COLUMN "filter" JSONB;
