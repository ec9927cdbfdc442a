import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A test CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it (PEM). */
export type TestPki = {
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
  /** A client certificate and key from another CA, which the server does not trust. */
  stranger: { cert: string; key: string };
};

/** Made with the openssl CLI, EC P-256 keys (quick), valid for two days. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "herald-pki-"));
  const at = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const key = (name: string) =>
    ssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", at(name));
  const selfSigned = (name: string, cn: string) => {
    key(`${name}.key`);
    ssl(
      "req",
      "-x509",
      "-new",
      "-key",
      at(`${name}.key`),
      "-out",
      at(`${name}.pem`),
      "-days",
      "2",
      "-subj",
      `/CN=${cn}`,
    );
  };
  const signed = (name: string, cn: string, ca: string, ext: string) => {
    key(`${name}.key`);
    ssl("req", "-new", "-key", at(`${name}.key`), "-out", at(`${name}.csr`), "-subj", `/CN=${cn}`);
    writeFileSync(at(`${name}.ext`), ext);
    ssl(
      "x509",
      "-req",
      "-in",
      at(`${name}.csr`),
      "-CA",
      at(`${ca}.pem`),
      "-CAkey",
      at(`${ca}.key`),
      "-CAcreateserial",
      "-out",
      at(`${name}.pem`),
      "-days",
      "2",
      "-extfile",
      at(`${name}.ext`),
    );
  };
  try {
    selfSigned("ca", "Herald Test CA");
    selfSigned("other", "Another CA");
    signed("server", "127.0.0.1", "ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    signed("client", "herald-client", "ca", "extendedKeyUsage=clientAuth\n");
    signed("stranger", "stranger", "other", "extendedKeyUsage=clientAuth\n");
    const read = (name: string) => readFileSync(at(name), "utf8");
    const pair = (name: string) => ({ cert: read(`${name}.pem`), key: read(`${name}.key`) });
    return { ca: read("ca.pem"), server: pair("server"), client: pair("client"), stranger: pair("stranger") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A self-signed certificate and its key, of the key `openssl genpkey` makes with these arguments. */
export function selfSignedWith(...keyArgs: string[]): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "herald-pki-"));
  const at = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  try {
    ssl("genpkey", ...keyArgs, "-out", at("k.pem"));
    ssl("req", "-x509", "-new", "-key", at("k.pem"), "-out", at("c.pem"), "-days", "2", "-subj", "/CN=odd");
    return { cert: readFileSync(at("c.pem"), "utf8"), key: readFileSync(at("k.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `pem` with its notAfter's month made 13: parsed, but with no date to read. */
export function unreadableExpiry(pem: string): string {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
  // The validity's second UTCTime: tag 0x17, 13 bytes, YYMMDDHHMMSSZ.
  const times = [...der.keys()].filter(
    (i) => der[i] === 0x17 && der[i + 1] === 13 && /^\d{12}Z$/.test(der.toString("latin1", i + 2, i + 15)),
  );
  der.write("13", times[1]! + 4, "latin1");
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64")}\n-----END CERTIFICATE-----\n`;
}
