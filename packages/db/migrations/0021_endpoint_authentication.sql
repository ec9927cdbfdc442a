-- How Herald authenticates to an endpoint, optionally: a TLS client certificate and key (mutual
-- TLS), a CA to trust for its server, and OAuth2 client credentials. `auth_sealed` holds them all,
-- sealed like the signing secret (the senders open it); `auth` what the API shows of them, with
-- no key and no client secret.
ALTER TABLE "endpoints" ADD COLUMN "auth" JSONB,
ADD COLUMN "auth_sealed" TEXT;
