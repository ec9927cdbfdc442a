import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { createSecureContext } from "node:tls";
import { invalid } from "../../http/errors.ts";

/**
 * An endpoint's TLS material as the senders can use it without surprise: each PEM block read
 * here, and only what was read kept, in the encoding Node writes (text around the blocks, and
 * anything a later block hid, is dropped). A key a sender would sign with on every handshake
 * is one of the usual sizes: an RSA key of 16,384 bits costs 200 ms of a sender's CPU a
 * handshake, which every other tenant's attempts on that sender would wait through.
 */
const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
/** Certificates in one field at most: a chain, or the CAs to trust. */
const CERTIFICATES_MAX = 10;
const RSA_BITS = { min: 2048, max: 4096 };
const CURVES = new Set(["prime256v1", "secp384r1", "secp521r1"]);

function blocks(text: string, param: string): { label: string; der: Buffer }[] {
  return [...text.matchAll(BLOCK)].map((m, i) => {
    const body = m[2]!.replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body))
      throw invalid(param, `PEM block ${i + 1} (${m[1]}) is not base64: a block holds nothing else.`);
    return { label: m[1]!, der: Buffer.from(body, "base64") };
  });
}

/** One certificate or more, each readable and with a readable validity: re-encoded. */
export function certificates(text: string, param: string): X509Certificate[] {
  const found = blocks(text, param);
  if (!found.length) throw invalid(param, "Expected a PEM certificate (-----BEGIN CERTIFICATE-----).");
  if (found.length > CERTIFICATES_MAX) throw invalid(param, `At most ${CERTIFICATES_MAX} certificates.`);
  return found.map(({ label, der }, i) => {
    if (label !== "CERTIFICATE")
      throw invalid(param, `PEM block ${i + 1} is a ${label}: only certificates belong here.`);
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(der);
    } catch {
      throw invalid(param, `Certificate ${i + 1} is not a readable certificate.`);
    }
    if (Number.isNaN(Date.parse(cert.validTo)) || Number.isNaN(Date.parse(cert.validFrom)))
      throw invalid(param, `Certificate ${i + 1} has a validity that cannot be read.`);
    return cert;
  });
}

export const pemOf = (certs: X509Certificate[]) => certs.map((c) => c.toString()).join("");

/** One unencrypted private key, of a type and size senders sign with cheaply. */
export function privateKey(text: string, param: string): KeyObject {
  if (/ENCRYPTED/.test(text)) throw invalid(param, "The key is encrypted: give it without a passphrase.");
  const found = blocks(text, param);
  if (found.length !== 1 || !/^(RSA |EC )?PRIVATE KEY$/.test(found[0]!.label))
    throw invalid(param, "Expected one PEM private key (PKCS#8, PKCS#1 or SEC1).");
  const { label, der } = found[0]!;
  let key: KeyObject;
  try {
    key = createPrivateKey({
      key: der,
      format: "der",
      type: label === "RSA PRIVATE KEY" ? "pkcs1" : label === "EC PRIVATE KEY" ? "sec1" : "pkcs8",
    });
  } catch {
    throw invalid(param, "Not a readable private key (PKCS#8, PKCS#1 or SEC1).");
  }
  const d = key.asymmetricKeyDetails ?? {};
  const bits = d.modulusLength ?? 0;
  const fits =
    key.asymmetricKeyType === "rsa" || key.asymmetricKeyType === "rsa-pss"
      ? bits >= RSA_BITS.min && bits <= RSA_BITS.max
      : key.asymmetricKeyType === "ec"
        ? CURVES.has(d.namedCurve ?? "")
        : key.asymmetricKeyType === "ed25519";
  if (!fits)
    throw invalid(
      param,
      `Use an RSA key of ${RSA_BITS.min} to ${RSA_BITS.max} bits, an EC key on P-256, P-384 or P-521, or Ed25519 (this one: ${key.asymmetricKeyType}${bits ? ` of ${bits} bits` : d.namedCurve ? ` on ${d.namedCurve}` : ""}).`,
    );
  return key;
}

export const keyPem = (key: KeyObject) => key.export({ type: "pkcs8", format: "pem" }) as string;

/** What a sender will build from it, built once here: what Node refuses is refused now. */
export function checkUsable(pem: { certificate?: string; key?: string; ca?: string }): void {
  try {
    createSecureContext({ cert: pem.certificate, key: pem.key, ca: pem.ca });
  } catch (err) {
    throw invalid("tls", `These cannot be used together for TLS: ${(err as Error).message}.`);
  }
}
