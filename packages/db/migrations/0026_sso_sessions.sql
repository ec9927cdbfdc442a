-- A dashboard session a person opened by single sign-on (OpenID Connect): their email, as the
-- identity provider vouched for it. Null for a session a key or a link opened.
ALTER TABLE "sessions" ADD COLUMN "person_email" TEXT;
